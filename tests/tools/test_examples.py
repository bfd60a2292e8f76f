"""Smoke runs of the examples: they start, train a little and log what they promise."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ppo_atari.py"
TINY = [
    "--game",
    "pong",
    "--num-envs",
    "4",
    "--num-steps",
    "32",
    "--total-timesteps",
    "256",
    "--update-epochs",
    "1",
    "--max-episode-frames",
    "200",
    "--torch-threads",
    "1",
    "--device",
    "cpu",
]


def run_example(tmp_path: Path, name: str, *flags: str) -> list[dict[str, str]]:
    log = tmp_path / f"{name}.csv"
    subprocess.run([sys.executable, str(EXAMPLE), *TINY, *flags, "--log-csv", str(log)], check=True, timeout=300)
    return read_log(log)


@pytest.fixture(scope="module")
def torchwm_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny run on torchwm (the default backend), once for the tests that read its log."""
    directory = tmp_path_factory.mktemp("ppo_torchwm")
    run_example(directory, "torchwm")
    return directory / "torchwm.csv"


def read_log(log: Path) -> list[dict[str, str]]:
    with open(log, newline="") as file:
        return list(csv.DictReader(file))


def test_ppo_atari_logs_raw_returns_and_speeds(torchwm_log):
    rows = read_log(torchwm_log)
    assert len(rows) == 2  # 256 steps / (4 envs * 32 steps) updates
    assert int(rows[-1]["global_step"]) == 256
    # 200-frame games (50 steps): every env finished some, with Pong's raw score (-21..21) and length.
    assert sum(int(row["episodes"]) for row in rows) >= 4
    assert -21 <= float(rows[-1]["mean_raw_return"]) <= 21 and float(rows[-1]["mean_length"]) == 50
    for key in ("steps_per_second", "env_seconds", "learner_seconds"):
        assert float(rows[-1][key]) > 0


def test_ppo_atari_same_run_on_torchwm_and_ale_py(tmp_path, torchwm_log):
    """torchwm is a drop-in for ale_py: a seeded run logs the same games on both."""
    pytest.importorskip("ale_py")
    torchwm_rows = read_log(torchwm_log)
    ale_py_rows = run_example(tmp_path, "ale_py", "--env-backend", "ale_py")
    for ours, theirs in zip(torchwm_rows, ale_py_rows, strict=True):
        for key in ("global_step", "episodes", "mean_raw_return", "mean_length"):
            assert ours[key] == theirs[key], key


def test_ppo_atari_async_batches(tmp_path):
    """batch_size < num_envs: send/recv by env id; the env count per rollout stays exact."""
    rows = run_example(tmp_path, "async", "--batch-size", "2")
    assert int(rows[-1]["global_step"]) == 256
    assert sum(int(row["episodes"]) for row in rows) >= 2


def test_ppo_atari_rejects_bad_flags():
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--env-backend", "gym"], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 2 and "--env-backend must be" in result.stderr


def load_example():
    import importlib.util

    spec = importlib.util.spec_from_file_location("ppo_atari", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["ppo_atari"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_ppo_atari_episode_stats_match_gymnasium_record_episode_statistics():
    """The example's raw returns and lengths, fed as in training (row by row, reset rows included),
    equal gymnasium's RecordEpisodeStatistics over ale_py's AtariVectorEnv with the same seeds."""
    import numpy as np

    ale_vector = pytest.importorskip("ale_py.vector_env")
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    import torchwm

    example = load_example()
    settings = {"reward_clipping": False, "max_num_frames_per_episode": 240, "repeat_action_probability": 0.0}
    ours = torchwm.AtariVectorEnv("breakout", 3, **settings)
    reference = RecordEpisodeStatistics(ale_vector.AtariVectorEnv("breakout", 3, **settings))
    stats = example.EpisodeStats(3)
    _, info = ours.reset(seed=5)
    reference.reset(seed=5)
    stats.record(info["env_id"], np.zeros(3), np.zeros(3, dtype=bool), info["lives"])
    rng = np.random.default_rng(0)
    expected = []
    for _ in range(200):
        actions = rng.integers(0, 4, 3)
        _, rewards, terminated, truncated, info = ours.step(actions)
        stats.record(info["env_id"], rewards, terminated | truncated, info["lives"])
        _, _, _, _, ref_info = reference.step(actions)
        if "episode" in ref_info:
            for i in np.flatnonzero(ref_info["_episode"]):
                expected.append((float(ref_info["episode"]["r"][i]), int(ref_info["episode"]["l"][i])))
    ours.close()
    reference.close()
    assert sorted(stats.take()) == sorted(expected) and len(expected) >= 6


def test_learning_curve_plot_from_a_training_log(tmp_path, torchwm_log):
    """plot_learning_curve.py turns a real --log-csv into a PNG; its running mean is the mean of the
    last games, counted game by game."""
    import importlib.util

    import numpy as np
    from PIL import Image

    png = tmp_path / "curve.png"
    plotter = EXAMPLE.parent / "plot_learning_curve.py"
    subprocess.run([sys.executable, str(plotter), str(torchwm_log), str(png)], check=True, timeout=120)
    with Image.open(png) as image:
        assert image.format == "PNG" and image.size == (700, 400)

    spec = importlib.util.spec_from_file_location("plot_learning_curve", plotter)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    steps, means, counts = module.read_games(str(EXAMPLE.parent.parent / "docs" / "ppo_learning_curve.csv"))
    assert len(steps) == len(means) == len(counts) > 0
    games = np.repeat(means, counts)
    ends = np.cumsum(counts)
    expected = [games[max(0, end - 30) : end].mean() for end in ends]
    np.testing.assert_allclose(module.running_mean(means, counts, 30), expected)
