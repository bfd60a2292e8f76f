"""PPO on Atari in one file (CleanRL style): Nature CNN, the standard Atari hyper-parameters.

    python examples/ppo_atari.py --game breakout --total-timesteps 10000000
    python examples/ppo_atari.py --env-backend ale_py        # the same run on ale_py's vector env
    python examples/ppo_atari.py --env-backend envpool       # or envpool's (pip install envpool)
    python examples/ppo_atari.py --batch-size 4 --num-envs 16  # asynchronous: see below

Every backend gets the same preprocessing (frame skip 4, max-pool, 84x84 grayscale, 4 stacked frames,
up to 30 no-ops and FIRE at reset, no sticky actions, 108,000 frames per game at most) with unclipped
rewards and no episodic life in the env: the learner clips rewards to their sign and cuts the value
bootstrap at a life loss (what ``reward_clipping``/``episodic_life`` do), so the logged episode
returns are raw game scores of whole games.

Asynchronous stepping: with ``--batch-size B < --num-envs N``, ``recv()`` returns the first B envs
to finish (``info["env_id"]`` names them) while the other envs keep stepping on the env threads;
the policy runs on one batch while the next is being emulated. Transitions are kept per env
(ordered by arrival), so GAE follows each env's own trajectory. ``B == N`` is the synchronous case.

Each update logs the env steps, the mean raw return of the games finished since the last log, the
end-to-end steps/s, and the seconds spent waiting on the envs (``send``/``recv``) and in the
learner (policy forward passes and the PPO update). ``--log-csv`` writes the same lines to a file,
each as it is made (a run stopped early keeps its curve); ``examples/plot_learning_curve.py`` plots it.
CUDA is used when present (``--device`` overrides).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import random
import time
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.distributions.categorical import Categorical

# ------------------------------------------------------------------------------------------ settings


@dataclasses.dataclass
class Args:
    game: str = "breakout"
    env_backend: str = "torchwm"
    num_envs: int = 8
    batch_size: int = 0  # envs per send/recv; 0: all of them (synchronous)
    total_timesteps: int = 10_000_000
    learning_rate: float = 2.5e-4
    anneal_lr: bool = True
    num_steps: int = 128  # agent steps per env per rollout
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    clip_coef: float = 0.1
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    max_episode_frames: int = 108_000
    seed: int = 1
    device: str = "auto"
    num_threads: int = 0  # env threads (torchwm/ale_py/envpool); 0: the backend's default
    torch_threads: int = 0  # torch's CPU threads; 0: torch's default
    log_csv: str = ""


def parse_args(argv: list[str] | None = None) -> Args:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    for field in dataclasses.fields(Args):
        flag = "--" + field.name.replace("_", "-")
        if field.type == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=field.default)
        else:
            parser.add_argument(flag, type=type(field.default), default=field.default)
    args = Args(**vars(parser.parse_args(argv)))
    args.batch_size = args.batch_size or args.num_envs
    if args.env_backend not in ("torchwm", "ale_py", "envpool"):
        parser.error("--env-backend must be torchwm, ale_py or envpool")
    if not 0 < args.batch_size <= args.num_envs:
        parser.error("--batch-size must be in [1, --num-envs]")
    if args.num_steps * args.num_envs % args.batch_size:
        parser.error("--num-steps * --num-envs must be a multiple of --batch-size")
    return args


# ------------------------------------------------------------------------------------------ envs


class AtariBackend:
    """torchwm's or ale_py's ``AtariVectorEnv`` (the same keywords): reset/send/recv by env id."""

    def __init__(self, args: Args) -> None:
        if args.env_backend == "torchwm":
            from torchwm import AtariVectorEnv
        else:
            from ale_py.vector_env import AtariVectorEnv
        self.env = AtariVectorEnv(
            args.game,
            args.num_envs,
            batch_size=args.batch_size,
            reward_clipping=False,
            episodic_life=False,
            repeat_action_probability=0.0,
            max_num_frames_per_episode=args.max_episode_frames,
            num_threads=args.num_threads,
        )
        self.num_actions = int(self.env.single_action_space.n)

    def reset(self, seed: int) -> tuple[np.ndarray, np.ndarray]:
        obs, info = self.env.reset(seed=seed)
        return obs, info["env_id"]

    def send(self, actions: np.ndarray, env_ids: np.ndarray) -> None:
        self.env.send(actions)  # for the envs of the last recv, in its order

    def recv(self) -> tuple[np.ndarray, ...]:
        obs, rewards, terminations, truncations, info = self.env.recv()
        return obs, rewards, terminations | truncations, info["lives"], info["env_id"]

    def close(self) -> None:
        self.env.close()


class EnvpoolBackend(AtariBackend):
    """envpool's Atari with the same settings (its async API names the envs in ``send``)."""

    def __init__(self, args: Args) -> None:
        import envpool

        task = "".join(part.capitalize() for part in args.game.split("_")) + "-v5"
        self.env = envpool.make(
            task,
            env_type="gymnasium",
            num_envs=args.num_envs,
            batch_size=args.batch_size,
            reward_clip=False,
            episodic_life=False,
            repeat_action_probability=0.0,
            max_episode_steps=args.max_episode_frames // 4,
            num_threads=args.num_threads,
            seed=args.seed,
        )
        self.num_actions = int(self.env.action_space.n)

    def reset(self, seed: int) -> tuple[np.ndarray, np.ndarray]:
        self.env.async_reset()
        obs, _, _, _, info = self.env.recv()
        return obs, info["env_id"]

    def send(self, actions: np.ndarray, env_ids: np.ndarray) -> None:
        self.env.send(actions, env_ids)


def make_backend(args: Args) -> AtariBackend:
    return EnvpoolBackend(args) if args.env_backend == "envpool" else AtariBackend(args)


# ------------------------------------------------------------------------------------------ agent


def layer_init(layer: nn.Module, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Module:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    """The Nature DQN CNN with a policy and a value head (CleanRL's PPO agent)."""

    def __init__(self, num_actions: int) -> None:
        super().__init__()
        self.network = nn.Sequential(
            layer_init(nn.Conv2d(4, 32, 8, stride=4)),
            nn.ReLU(),
            layer_init(nn.Conv2d(32, 64, 4, stride=2)),
            nn.ReLU(),
            layer_init(nn.Conv2d(64, 64, 3, stride=1)),
            nn.ReLU(),
            nn.Flatten(),
            layer_init(nn.Linear(64 * 7 * 7, 512)),
            nn.ReLU(),
        )
        self.actor = layer_init(nn.Linear(512, num_actions), std=0.01)
        self.critic = layer_init(nn.Linear(512, 1), std=1)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(self.network(obs / 255.0)).squeeze(-1)

    def act(self, obs: torch.Tensor, action: torch.Tensor | None = None) -> tuple[torch.Tensor, ...]:
        hidden = self.network(obs / 255.0)
        dist = Categorical(logits=self.actor(hidden))
        action = dist.sample() if action is None else action
        return action, dist.log_prob(action), dist.entropy(), self.critic(hidden).squeeze(-1)


# ------------------------------------------------------------------------------------------ rollout


class Rollout:
    """One rollout's rows in arrival order: each row is an observation of one env (``env_id``), the
    action taken on it, and the reward/done that the env's *previous* action produced."""

    def __init__(self, rows: int, batch: int, obs_shape: tuple[int, ...], device: torch.device) -> None:
        self.obs = torch.zeros((rows, batch, *obs_shape), dtype=torch.uint8, device=device)
        self.actions = torch.zeros((rows, batch), dtype=torch.long, device=device)
        self.logprobs = torch.zeros((rows, batch), device=device)
        self.values = np.zeros((rows, batch), dtype=np.float32)
        self.env_ids = np.zeros((rows, batch), dtype=np.int64)
        self.prev_rewards = np.zeros((rows, batch), dtype=np.float32)  # clipped
        self.prev_dones = np.zeros((rows, batch), dtype=bool)  # the game ended
        self.prev_life_lost = np.zeros((rows, batch), dtype=bool)

    def advantages(self, num_envs: int, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
        """GAE along each env's own sequence of rows. Returns advantages and a mask of the rows that
        are transitions to train on: not an env's last row (its outcome is in the next rollout), and
        not the terminal observation after a game ended (under NEXT_STEP its action is ignored)."""
        flat_ids = self.env_ids.reshape(-1)
        order = np.argsort(flat_ids, kind="stable")  # per env, in arrival order
        values = self.values.reshape(-1)
        rewards, dones = self.prev_rewards.reshape(-1), self.prev_dones.reshape(-1)
        cut = dones | self.prev_life_lost.reshape(-1)
        advantages = np.zeros_like(values)
        trainable = np.zeros(values.shape, dtype=bool)
        last_gae = 0.0
        for position in range(len(order) - 1, -1, -1):
            row = order[position]
            following = order[position + 1] if position + 1 < len(order) else None
            if following is None or flat_ids[following] != flat_ids[row] or dones[row]:
                last_gae = 0.0
                continue
            not_cut = 0.0 if cut[following] else 1.0
            delta = rewards[following] + gamma * values[following] * not_cut - values[row]
            last_gae = delta + gamma * lam * not_cut * last_gae
            advantages[row], trainable[row] = last_gae, True
        return advantages, trainable


class EpisodeStats:
    """Raw return and length of each env's current game; finished games since the last report."""

    def __init__(self, num_envs: int) -> None:
        self.returns = np.zeros(num_envs, dtype=np.float64)
        self.lengths = np.full(num_envs, -1, dtype=np.int64)  # an env's first row (its reset) is no step
        self.lives = np.zeros(num_envs, dtype=np.int64)
        self.finished: list[tuple[float, int]] = []

    def record(self, env_ids: np.ndarray, rewards: np.ndarray, dones: np.ndarray, lives: np.ndarray) -> np.ndarray:
        """Adds one step's raw rewards; returns which envs lost a life (not at a game's end)."""
        self.returns[env_ids] += rewards
        self.lengths[env_ids] += 1
        life_lost = (lives < self.lives[env_ids]) & ~dones
        self.lives[env_ids] = lives
        for env in env_ids[dones]:
            self.finished.append((float(self.returns[env]), int(self.lengths[env])))
            self.returns[env], self.lengths[env] = 0.0, -1  # the next row is the new game's reset
        return life_lost

    def take(self) -> list[tuple[float, int]]:
        finished, self.finished = self.finished, []
        return finished


# ------------------------------------------------------------------------------------------ training


class CsvLog:
    """``--log-csv``: each update's line is written (and flushed) when it is made, so a run that is
    stopped early keeps its learning curve so far. No path: writes nothing."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.file: Any = None
        self.writer: csv.DictWriter | None = None

    def write(self, line: dict[str, Any]) -> None:
        if not self.path:
            return
        if self.writer is None:
            self.file = open(self.path, "w", newline="")  # noqa: SIM115 (closed by __exit__)
            self.writer = csv.DictWriter(self.file, fieldnames=list(line))
            self.writer.writeheader()
        self.writer.writerow(line)
        self.file.flush()

    def __enter__(self) -> CsvLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.file is not None:
            self.file.close()


class Trainer:
    def __init__(self, args: Args, csv_log: CsvLog) -> None:
        self.args, self.csv_log = args, csv_log
        random.seed(args.seed)
        np.random.seed(args.seed)
        torch.manual_seed(args.seed)
        if args.torch_threads:
            torch.set_num_threads(args.torch_threads)
        device = args.device if args.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
        self.device = torch.device(device)
        self.envs = make_backend(args)
        self.agent = Agent(self.envs.num_actions).to(self.device)
        self.optimizer = torch.optim.Adam(self.agent.parameters(), lr=args.learning_rate, eps=1e-5)
        self.iterations = args.num_steps * args.num_envs // args.batch_size  # recv() calls per rollout
        self.rollout = Rollout(self.iterations, args.batch_size, (4, 84, 84), self.device)
        self.stats = EpisodeStats(args.num_envs)
        self.env_seconds = self.learn_seconds = 0.0
        self.global_step = 0

    def collect(self, batch: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        """Fills the rollout: policy on the batch at hand, send its actions, recv the next batch."""
        obs, rewards, dones, lives, env_ids = batch
        memory = self.rollout
        for i in range(self.iterations):
            started = time.perf_counter()
            life_lost = self.stats.record(env_ids, rewards, dones, lives)
            obs_tensor = torch.as_tensor(obs, device=self.device)
            with torch.no_grad():
                actions, logprobs, _, values = self.agent.act(obs_tensor)
            memory.obs[i], memory.actions[i], memory.logprobs[i] = obs_tensor, actions, logprobs
            memory.values[i] = values.cpu().numpy()
            memory.env_ids[i], memory.prev_dones[i], memory.prev_life_lost[i] = env_ids, dones, life_lost
            memory.prev_rewards[i] = np.sign(rewards)
            actions_np = actions.cpu().numpy()
            between = time.perf_counter()
            self.envs.send(actions_np, env_ids)
            obs, rewards, dones, lives, env_ids = self.envs.recv()
            self.learn_seconds += between - started
            self.env_seconds += time.perf_counter() - between
            self.global_step += len(env_ids)
        return obs, rewards, dones, lives, env_ids

    def update(self, progress: float) -> None:
        args, memory = self.args, self.rollout
        started = time.perf_counter()
        if args.anneal_lr:
            self.optimizer.param_groups[0]["lr"] = (1.0 - progress) * args.learning_rate
        advantages, trainable = memory.advantages(args.num_envs, args.gamma, args.gae_lambda)
        rows = torch.as_tensor(np.flatnonzero(trainable), device=self.device)
        b_adv = torch.as_tensor(advantages, device=self.device)[rows]
        b_values = torch.as_tensor(memory.values.reshape(-1), device=self.device)[rows]
        b_returns = b_adv + b_values
        b_obs = memory.obs.reshape(-1, 4, 84, 84)[rows]
        b_actions, b_logprobs = memory.actions.reshape(-1)[rows], memory.logprobs.reshape(-1)[rows]
        minibatch = max(1, len(rows) // args.num_minibatches)
        for _ in range(args.update_epochs):
            for mb in torch.randperm(len(rows), device=self.device).split(minibatch):
                self.ppo_step(b_obs[mb], b_actions[mb], b_logprobs[mb], b_adv[mb], b_returns[mb], b_values[mb])
        self.learn_seconds += time.perf_counter() - started

    def ppo_step(self, obs, actions, old_logprobs, adv, returns, old_values) -> None:  # type: ignore[no-untyped-def]
        args = self.args
        _, logprobs, entropy, values = self.agent.act(obs, actions)
        ratio = (logprobs - old_logprobs).exp()
        adv = (adv - adv.mean()) / (adv.std() + 1e-8) if len(adv) > 1 else adv
        pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
        clipped = old_values + (values - old_values).clamp(-args.clip_coef, args.clip_coef)
        v_loss = 0.5 * torch.max((values - returns) ** 2, (clipped - returns) ** 2).mean()
        loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.agent.parameters(), args.max_grad_norm)
        self.optimizer.step()

    def run(self) -> list[dict[str, Any]]:
        args = self.args
        obs, env_ids = self.envs.reset(args.seed)
        zeros = np.zeros(len(env_ids))
        batch = (obs, zeros, zeros.astype(bool), np.zeros(len(env_ids), dtype=np.int64), env_ids)
        num_updates = max(1, args.total_timesteps // (args.num_steps * args.num_envs))
        log: list[dict[str, Any]] = []
        start = time.perf_counter()
        for update in range(num_updates):
            batch = self.collect(batch)
            self.update(update / num_updates)
            log.append(self.report(time.perf_counter() - start))
            self.csv_log.write(log[-1])
        self.envs.close()
        return log

    def report(self, elapsed: float) -> dict[str, Any]:
        games = self.stats.take()
        line = {
            "global_step": self.global_step,
            "episodes": len(games),
            "mean_raw_return": float(np.mean([r for r, _ in games])) if games else float("nan"),
            "mean_length": float(np.mean([n for _, n in games])) if games else float("nan"),
            "steps_per_second": self.global_step / elapsed,
            "env_seconds": self.env_seconds,
            "learner_seconds": self.learn_seconds,
        }
        print(
            " ".join(
                f"{key}={value:.4g}" if isinstance(value, float) else f"{key}={value}" for key, value in line.items()
            ),
            flush=True,
        )
        return line


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    with CsvLog(args.log_csv) as csv_log:
        return Trainer(args, csv_log).run()


if __name__ == "__main__":
    main()
