"""PPO with RLlib on torchwm's Atari envs: each RLlib env runner steps one torchwm ``AtariVectorEnv``.

    pip install "torchwm[ray]"
    python examples/rllib_ppo_atari.py --game Breakout --iterations 10
    python examples/rllib_ppo_atari.py --address auto        # on a running Ray cluster (`ray start --head`)

``"TorchWM/<Game>-v5"`` resolves in every env runner process without importing torchwm there (torchwm's
gymnasium start-up hook); ``gym_env_vectorize_mode="vector_entry_point"`` makes RLlib build torchwm's
``AtariVectorEnv`` (``gym.make_vec``) instead of a list of single envs; ``atari_env_to_module`` and
``atari_model_config`` give RLlib's default CNN the float channels-last frames it expects.
"""

from __future__ import annotations

import argparse

import ray
from ray.rllib.algorithms.ppo import PPOConfig

from torchwm.ray.rllib import atari_env_to_module, atari_model_config


def build_config(
    game: str = "Breakout",
    num_env_runners: int = 2,
    num_envs_per_env_runner: int = 4,
    rollout_fragment_length: int = 64,
    minibatch_size: int = 128,
    num_epochs: int = 2,
) -> PPOConfig:
    """PPO on ``TorchWM/<game>-v5``; one training batch is every runner's fragment of every env."""
    train_batch = num_env_runners * num_envs_per_env_runner * rollout_fragment_length
    return (
        PPOConfig()
        .environment(f"TorchWM/{game}-v5", env_config={"num_threads": 1})
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=num_envs_per_env_runner,
            num_cpus_per_env_runner=0.5,
            gym_env_vectorize_mode="vector_entry_point",
            env_to_module_connector=atari_env_to_module,
            rollout_fragment_length=rollout_fragment_length,
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=train_batch,
            minibatch_size=min(minibatch_size, train_batch),
            num_epochs=num_epochs,
            lr=2.5e-4,
            clip_param=0.1,
            vf_clip_param=10.0,
            entropy_coeff=0.01,
        )
        .rl_module(model_config=atari_model_config())
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="Breakout")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--env-runners", type=int, default=2)
    parser.add_argument("--envs-per-runner", type=int, default=4)
    parser.add_argument("--address", default=None, help="Ray cluster to join (default: start a local one)")
    args = parser.parse_args()
    ray.init(address=args.address)
    algo = build_config(args.game, args.env_runners, args.envs_per_runner).build_algo()
    try:
        for i in range(args.iterations):
            result = algo.train()
            runners = result["env_runners"]
            print(
                f"iteration {i + 1}: episode return mean {runners.get('episode_return_mean', float('nan')):.2f}, "
                f"env steps sampled {runners.get('num_env_steps_sampled_lifetime', 0)}"
            )
    finally:
        algo.stop()
        ray.shutdown()


if __name__ == "__main__":
    main()
