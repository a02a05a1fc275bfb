"""N environments stepped by a Taichi kernel, a torch (and a JAX) policy acting on them
every step, with no copies between the two.

The Genesis pattern: the simulator's state lives in Taichi memory (a ``ti.ndarray`` or,
in Genesis' performance mode, a ``ti.field``), the policy is a torch (or JAX) network,
and every step the observations go from the simulator to the policy and the actions
back. Here the environments are point masses pulled towards the origin by a force the
policy chooses.

* zero-copy: ``torch.from_dlpack(ta.asarray(obs))`` is made once and *is* the Taichi
  memory; the policy writes its actions straight into the action buffer (``out=``); the
  environment kernel (a plain ``@ti.kernel``) is called on TiArray views of its state.
* copies: the same loop with ``to_torch()``/``from_torch()`` (fields) or
  ``to_numpy()``/``from_numpy()`` (ndarrays, which have no ``to_torch`` in taichi 1.7).
* JAX (when jax is installed): the observations are viewed by JAX (zero-copy where the
  buffer is 64-byte aligned, as Taichi's ndarrays are), the jitted policy's actions go
  to the kernel as a read-only TiArray, which a plain kernel may read since it never
  writes its ``act`` argument.

Both loops give the same trajectory (checked). ``python benchmarks/bench_interop.py``
times the per-step exchange at N = 4096 (its second table).

    python examples/rl_zero_copy.py [--n 4096] [--steps 200] [--state field|ndarray] [--quick]
"""

import argparse

import tiarray as ta  # before taichi: it keeps Taichi's import banner quiet

# isort: split
import numpy as np

if ta.backend() == "quadrants":  # TIARRAY_BACKEND=quadrants: Genesis' fork, the same names
    import quadrants as ti
else:
    import taichi as ti

OBS, ACT = 4, 2  # observation: (x, y, vx, vy); action: a force (fx, fy)
DT = 0.05


@ti.kernel
def env_step(
    state: ti.types.ndarray(dtype=ti.f32, ndim=2),  # (N, 4) x, y, vx, vy
    act: ti.types.ndarray(dtype=ti.f32, ndim=2),  # (N, 2), read only
    obs: ti.types.ndarray(dtype=ti.f32, ndim=2),  # (N, 4)
    reward: ti.types.ndarray(dtype=ti.f32, ndim=1),  # (N,)
):
    for i in range(state.shape[0]):
        for k in ti.static(range(2)):
            state[i, 2 + k] += DT * (act[i, k] - 0.1 * state[i, 2 + k])
            state[i, k] += DT * state[i, 2 + k]
        r = 0.0
        for k in ti.static(range(4)):
            obs[i, k] = state[i, k]
            r -= state[i, k] * state[i, k]
        reward[i] = r


class Env:
    """The batch's memory in Taichi: state, observations, actions, rewards."""

    def __init__(self, n: int, kind: str, seed: int = 0):
        self.kind = kind
        make = (
            (lambda *s: ti.field(ti.f32, shape=s)) if kind == "field" else (lambda *s: ti.ndarray(ti.f32, s))
        )
        self.state, self.obs, self.act, self.reward = make(n, OBS), make(n, OBS), make(n, ACT), make(n)
        init = np.random.default_rng(seed).uniform(-1, 1, (n, OBS)).astype(np.float32)
        self.state.from_numpy(init)
        self.obs.from_numpy(init)
        # TiArray views of the Taichi memory, made once (zero-copy: the same addresses)
        self.v_state, self.v_obs, self.v_act, self.v_reward = (
            ta.asarray(x, copy=False) for x in (self.state, self.obs, self.act, self.reward)
        )

    def step(self, act=None):
        """One step of every environment; ``act``: a TiArray of actions (default: the buffer)."""
        env_step(self.v_state, self.v_act if act is None else act, self.v_obs, self.v_reward)

    def obs_copy_torch(self, torch):
        return self.obs.to_torch() if self.kind == "field" else torch.from_numpy(self.obs.to_numpy())

    def act_from_torch(self, a):
        if self.kind == "field":
            self.act.from_torch(a)
        else:
            self.act.from_numpy(a.numpy())


def torch_policy(torch, seed: int = 1, hidden: int = 32):
    g = torch.Generator().manual_seed(seed)
    w1 = torch.randn(OBS, hidden, generator=g) * 0.5
    w2 = torch.randn(hidden, ACT, generator=g) * 0.5

    def act(obs, out=None):
        with torch.no_grad():
            h = torch.tanh(obs @ w1)
            return torch.matmul(h, w2, out=out)

    return act


def run_zero_copy(env: Env, steps: int, policy, torch) -> float:
    obs_t = torch.from_dlpack(env.v_obs)  # the Taichi memory itself
    act_t = torch.from_dlpack(env.v_act)
    total = 0.0
    for _ in range(steps):
        policy(obs_t, out=act_t)  # actions written straight into Taichi's action buffer
        env.step()
        total += float(env.v_reward._numpy_view().sum())
    return total


def run_copies(env: Env, steps: int, policy, torch) -> float:
    total = 0.0
    for _ in range(steps):
        env.act_from_torch(policy(env.obs_copy_torch(torch)))
        env.step()
        total += float(env.reward.to_numpy().sum())
    return total


def run_jax(env: Env, steps: int, jax) -> tuple:
    import jax.numpy as jnp

    k1, k2 = jax.random.split(jax.random.PRNGKey(1))
    w1 = jax.random.normal(k1, (OBS, 32)) * 0.5
    w2 = jax.random.normal(k2, (32, ACT)) * 0.5
    policy = jax.jit(lambda o: jnp.tanh(o @ w1) @ w2)
    total, shared = 0.0, None
    for _ in range(steps):
        o = jax.dlpack.from_dlpack(env.v_obs)  # a view of Taichi's observations
        if shared is None:
            shared = o.unsafe_buffer_pointer() == env.v_obs.ptr
        a = policy(o).block_until_ready()  # done reading obs before the kernel writes it again
        env.step(ta.asarray(a))  # read-only TiArray: the kernel only reads 'act'
        total += float(env.v_reward._numpy_view().sum())
    return total, shared


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=4096, help="environments")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--state", choices=["field", "ndarray"], default=None, help="default: both")
    p.add_argument("--quick", action="store_true", help="a short run (CI)")
    args = p.parse_args()
    if args.quick:
        args.n, args.steps = min(args.n, 256), min(args.steps, 20)
    import torch

    torch.set_num_threads(2)
    ta.init()  # starts Taichi (tiarray's settings); a program started with ti.init() works too
    policy = torch_policy(torch)
    for kind in [args.state] if args.state else ["ndarray", "field"]:
        results = {}
        for name, run in (("zero-copy", run_zero_copy), ("copies", run_copies)):
            env = Env(args.n, kind)
            total = run(env, args.steps, policy, torch)
            results[name] = (total, env.state.to_numpy())
        (z_total, z_state), (c_total, c_state) = results["zero-copy"], results["copies"]
        if not np.allclose(z_state, c_state, rtol=1e-5, atol=1e-6) or not np.isclose(
            z_total, c_total, rtol=1e-5
        ):
            raise SystemExit(f"rl_zero_copy: the zero-copy and copying loops disagree ({kind} state)")
        print(
            f"{kind:8s} state, N={args.n}, {args.steps} steps: mean reward {z_total / args.steps / args.n:.4f}, "
            "the same trajectory with zero-copy views and with copies"
        )
    try:
        import jax
    except ImportError:
        print("jax is not installed: the JAX policy is skipped")
        return
    env = Env(args.n, "ndarray")
    total, shared = run_jax(env, args.steps, jax)
    print(
        f"JAX policy, ndarray state: mean reward {total / args.steps / args.n:.4f}; "
        f"JAX read the observations {'in place (zero-copy)' if shared else 'from a copy (buffer not aligned)'}"
    )


if __name__ == "__main__":
    main()
