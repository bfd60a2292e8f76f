"""A short rollout for scripts/sanitize.sh: every C++ entry point the Python API reaches, under ASan/UBSan.

Vector envs in both observation formats and autoreset modes, async batches, seeded resets, resets run ahead, and the raw
emulator (settings, state round trip, RAM, palettes, colour averaging), plus rejected calls.
"""

from typing import Any

from ale_py import roms
from gymnasium.vector import AutoresetMode

import torchwm
from torchwm import _core


def vector_rollouts() -> None:
    settings: list[dict[str, Any]] = [
        {"num_envs": 3},
        {"num_envs": 3, "grayscale": False, "autoreset_mode": AutoresetMode.SAME_STEP, "episodic_life": True},
        {"num_envs": 4, "batch_size": 2, "repeat_action_probability": 0.25, "full_action_space": True},
        # Short episodes whose resets run ahead on the reset threads, started by the steps that end them.
        {"num_envs": 3, "reset_ahead": True, "max_num_frames_per_episode": 120},
    ]
    for kwargs in settings:
        env = torchwm.AtariVectorEnv("breakout", **kwargs)
        env.action_space.seed(0)
        env.reset(seed=1)
        for _ in range(300):
            env.step(env.action_space.sample())
        env.close()


def emulator_calls() -> None:
    for game in ("pong", "space_invaders"):
        ale = _core.Ale()
        ale.set_bool("color_averaging", True)
        ale.set_int("random_seed", 3)
        ale.load_rom(str(roms.get_rom_path(game)))
        state = ale.clone_state()
        for step in range(500):
            ale.act(step % 6)
            ale.screen_rgb()
            ale.screen_grayscale()
        ale.restore_state(state)
        ale.set_ram(3, 7)
        ale.ram()
        for method, args in ((ale.act, (99,)), (ale.set_int, ("no_such_setting", 1))):
            try:
                method(*args)
            except Exception:
                pass
            else:
                raise AssertionError("a bad call was accepted")


if __name__ == "__main__":
    vector_rollouts()
    emulator_calls()
    print("rollout done")
