"""render() against ale_py's own render(), and recordings decoded with Pillow against render()."""

from __future__ import annotations

import os
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from ale_py.env import AtariEnv
from PIL import Image

import torchwm
from torchwm import cli, errors
from torchwm.errors import InvalidArgumentError


def ale_seed(seed: int) -> int:
    """The ALE seed ale_py's ``AtariEnv.reset(seed=seed)`` sets (``seed_game``'s SeedSequence)."""
    return int(np.int32(np.random.SeedSequence(seed).generate_state(n_words=2)[1]))


def ale_py_seeds(count: int) -> list[int]:
    """Seeds whose ALE seed is in the range torchwm's reset(seed=array) accepts, [0, 2**31)."""
    return [s for s in range(100) if ale_seed(s) >= 0][:count]


def tile(frames: np.ndarray, cols: int, padding: int) -> np.ndarray:
    """The grid the recorder draws at scale 1: frame i at row i // cols, column i % cols, black gaps."""
    count, height, width, _ = frames.shape
    rows = -(-count // cols)
    grid = np.zeros(
        (rows * height + (rows - 1) * padding, cols * width + (cols - 1) * padding, 3),
        np.uint8,
    )
    for i, frame in enumerate(frames):
        y, x = i // cols * (height + padding), i % cols * (width + padding)
        grid[y : y + height, x : x + width] = frame
    return grid


def gif_frames(path: Path) -> list[np.ndarray]:
    with Image.open(path) as image:
        frames = []
        for index in range(image.n_frames):
            image.seek(index)
            frames.append(np.asarray(image.convert("RGB")))
    return frames


@pytest.mark.parametrize("game", ["pong", "breakout"])
def test_render_equals_ale_py_render(game):
    """Same seeds, same actions: each env's render() is ale_py AtariEnv(render_mode="rgb_array").render()."""
    seeds = ale_py_seeds(3)
    references = [
        AtariEnv(
            game=game,
            frameskip=4,
            repeat_action_probability=0.0,
            render_mode="rgb_array",
        )
        for _ in seeds
    ]
    env = torchwm.AtariVectorEnv(
        game,
        len(seeds),
        noop_max=0,
        use_fire_reset=False,
        repeat_action_probability=0.0,
        render_mode="rgb_array",
    )
    try:
        env.reset(seed=np.array([ale_seed(s) for s in seeds]))
        for reference, seed in zip(references, seeds):
            reference.reset(seed=seed)
        rng = np.random.default_rng(0)
        for step in range(80):
            frames = env.render()
            assert isinstance(frames, tuple) and len(frames) == len(seeds)
            for i, (frame, reference) in enumerate(zip(frames, references)):
                assert frame.shape == (210, 160, 3) and frame.dtype == np.uint8
                np.testing.assert_array_equal(frame, reference.render(), err_msg=f"env {i} at step {step}")
            actions = rng.integers(0, env.single_action_space.n, len(seeds))
            _, _, terminated, truncated, _ = env.step(actions)
            ended = [reference.step(int(a))[2] for reference, a in zip(references, actions)]
            # torchwm stops a step's frame loop at game over (as ale_py's vector env does), ale_py's AtariEnv
            # plays all frames: screens are compared until an episode ends.
            if np.any(terminated | truncated) or any(ended):
                break
    finally:
        env.close()
        for reference in references:
            reference.close()


def test_render_mode_is_checked_like_ale_py():
    with pytest.raises(gymnasium.error.Error) as ale_py_error:
        AtariEnv(game="pong", render_mode="video")
    with pytest.raises(InvalidArgumentError) as ours:
        torchwm.AtariVectorEnv("pong", 1, render_mode="video")
    assert isinstance(ours.value, type(ale_py_error.value)) and isinstance(ours.value, ValueError)
    assert "render_mode" in str(ours.value)

    reference = AtariEnv(game="pong")
    env = torchwm.AtariVectorEnv("pong", 2)
    try:
        reference.reset(seed=0)
        env.reset(seed=0)
        with pytest.raises(gymnasium.error.Error):
            reference.render()
        with pytest.raises(InvalidArgumentError, match="render_mode='rgb_array'"):
            env.render()
        env.step(np.zeros(2, dtype=np.int64))  # still usable
    finally:
        env.close()
        reference.close()


def test_render_needs_every_env_idle():
    env = torchwm.AtariVectorEnv("pong", 4, batch_size=2, render_mode="rgb_array")
    try:
        env.reset(seed=1)
        env.send(np.zeros(2, dtype=np.int64))
        with pytest.raises(torchwm.EnvStateError, match="in flight"):
            env.render()
        env.recv()
        with pytest.raises(torchwm.EnvStateError, match="batch_size == num_envs"):
            env.render()
    finally:
        env.close()
    with pytest.raises(torchwm.EnvStateError):
        env.render()


def test_gif_frames_are_the_rendered_frames(tmp_path):
    env = torchwm.AtariVectorEnv("breakout", 3, render_mode="rgb_array")
    path = tmp_path / "breakout.gif"
    rendered = []
    try:
        env.reset(seed=3)
        with torchwm.Recorder(path, cols=2, scale=1.0, padding=3) as recorder:
            for _ in range(12):
                rendered.append(np.stack(env.render()))
                recorder.capture(env)
                env.step(env.action_space.sample())
        summary = recorder.close()
    finally:
        env.close()
    assert summary == {
        "path": str(path),
        "format": "gif",
        "images": 12,
        "width": 323,
        "height": 423,
    }
    decoded = gif_frames(path)
    assert len(decoded) == 12
    for index, (frame, frames) in enumerate(zip(decoded, rendered)):
        np.testing.assert_array_equal(frame, tile(frames, cols=2, padding=3), err_msg=f"GIF frame {index}")


def test_png_stills_at_the_default_scale(tmp_path):
    """16 envs: a 4x4 grid of half-size tiles, each pixel a pixel of its env's frame (nearest neighbour)."""
    env = torchwm.AtariVectorEnv("pong", 16, render_mode="rgb_array")
    try:
        summary = torchwm.record(env, tmp_path / "pong.png", steps=3, seed=5)
        env.reset(seed=5)
        env.action_space.seed(5)
        expected = [np.stack(env.render())]
        for _ in range(3):
            env.step(env.action_space.sample())
            expected.append(np.stack(env.render()))
    finally:
        env.close()
    assert summary["images"] == 4 and (summary["height"], summary["width"]) == (
        426,
        326,
    )
    for index, frames in enumerate(expected):
        still = np.asarray(Image.open(tmp_path / f"pong_{index:05d}.png").convert("RGB"))
        assert still.shape == (426, 326, 3)
        for i, frame in enumerate(frames):
            y, x = i // 4 * (105 + 2), i % 4 * (80 + 2)
            np.testing.assert_array_equal(
                still[y : y + 105, x : x + 80],
                frame[1::2, 1::2],
                err_msg=f"still {index} env {i}",
            )


def test_recorder_rejects_bad_input_and_stays_usable(tmp_path):
    frames = np.zeros((2, 10, 8, 3), np.uint8)
    with pytest.raises(InvalidArgumentError, match=r"\.gif"):
        torchwm.Recorder(tmp_path / "out.mp4").add_frames(frames)
    with pytest.raises(OSError):
        torchwm.Recorder(tmp_path / "missing" / "out.gif").add_frames(frames)
    with pytest.raises(InvalidArgumentError, match="scale"):
        torchwm.Recorder(tmp_path / "out.gif", scale=-1.0).add_frames(frames)
    with pytest.raises(InvalidArgumentError, match="padding"):
        torchwm.Recorder(tmp_path / "out.gif", padding=-2).add_frames(frames)
    recorder = torchwm.Recorder(tmp_path / "out.gif", scale=1.0)
    recorder.add_frames(frames)
    for bad in (
        np.zeros((3, 10, 8, 3), np.uint8),
        np.zeros((2, 10, 8, 3), np.float32),
        np.zeros((2, 10, 8), np.uint8),
    ):
        with pytest.raises(InvalidArgumentError):
            recorder.add_frames(bad)
    recorder.add_frames((frames[0] + 200, frames[1]))
    assert recorder.close()["images"] == 2
    assert len(gif_frames(tmp_path / "out.gif")) == 2
    with pytest.raises(errors.EnvStateError):
        recorder.add_frames(frames)


def test_record_uses_the_policy_and_checks_its_env(tmp_path):
    env = torchwm.AtariVectorEnv("pong", 2, render_mode="rgb_array")
    seen = []

    def policy(observations):
        seen.append(observations.shape)
        return np.ones(2, dtype=np.int64)

    try:
        summary = torchwm.record(env, tmp_path / "p.gif", steps=4, policy=policy, seed=0)
    finally:
        env.close()
    assert seen == [(2, 4, 84, 84)] * 4 and summary["images"] == 5
    plain = torchwm.AtariVectorEnv("pong", 2)
    try:
        with pytest.raises(InvalidArgumentError, match="render_mode"):
            torchwm.record(plain, tmp_path / "q.gif", steps=2)
        with pytest.raises(InvalidArgumentError, match="steps"):
            torchwm.record(plain, tmp_path / "q.gif", steps=-1)
    finally:
        plain.close()


def test_cli_records_a_gif(tmp_path, capsys):
    out = tmp_path / "cli.gif"
    assert (
        cli.main(
            [
                "record",
                "--game",
                "pong",
                "--num-envs",
                "4",
                "--steps",
                "5",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    decoded = gif_frames(out)
    assert len(decoded) == 6 and decoded[0].shape == (210 * 2 + 2, 160 * 2 + 2, 3)
    assert "wrote 6 322x422 images" in capsys.readouterr().out


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_recorder_after_fork_fails_clearly_in_the_child(tmp_path):
    frames = np.zeros((2, 10, 8, 3), np.uint8)
    recorder = torchwm.Recorder(tmp_path / "parent.gif", scale=1.0)
    recorder.add_frames(frames)
    pid = os.fork()
    if pid == 0:  # child: the encoder thread is the parent's; a new recorder works
        code = 1
        try:
            try:
                recorder.add_frames(frames)
            except errors.EnvStateError as error:
                if "fork" in str(error):
                    with torchwm.Recorder(tmp_path / "child.gif", scale=1.0) as child:
                        child.add_frames(frames)
                    code = 0 if child.close()["images"] == 1 else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    recorder.add_frames(frames)  # the parent's recorder is unaffected
    assert recorder.close()["images"] == 2
    assert len(gif_frames(tmp_path / "parent.gif")) == 2 and len(gif_frames(tmp_path / "child.gif")) == 1


def test_gymnasium_make_vec_passes_render_mode():
    env = gymnasium.make_vec("TorchWM/Pong-v5", num_envs=2, render_mode="rgb_array")
    try:
        env.reset(seed=0)
        assert env.render_mode == "rgb_array"
        assert [frame.shape for frame in env.render()] == [(210, 160, 3)] * 2
    finally:
        env.close()
