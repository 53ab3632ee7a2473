"""What the docker backend costs per run over the local one.

`python benchmarks/docker_overhead.py [--image IMAGE] [--repeats N] [--rounds R]` runs the smoke
taskset (baseline, the simulator, 1 worker) locally and in containers from IMAGE (default
the image tests/environments/build_image.sh builds, named by `build_image.sh --tag`), alternated for R rounds, and
times the container operations a run makes on their own. The last line holds the figures:

- `local_run_s`, `docker_run_s`: median wall time per run (the round's wall time ÷ its runs);
- `per_run_overhead_s`: their difference;
- `start_remove_s`: median of starting a run's container and removing it;
- `exec_s`: median of `docker exec` of `true` in a running container;
- `eval_container_s`: median of a fresh container running `true` (as evaluation does), removed after.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import yaml

from ctxbench.harness.config import load_config
from ctxbench.harness.environments.docker import exec_in, image_problem, remove_container, run_once, start_container
from ctxbench.harness.run.runner import prepare, run_experiment
from ctxbench.harness.records.taskset_records import Container
from ctxbench.harness.environments.docker_environment import container_slots

ROOT = Path(__file__).resolve().parent.parent


def experiment(folder: Path, taskset: Path, repeats: int, label: str) -> Path:
    path = folder / f"{label}.yaml"
    path.write_text(yaml.safe_dump({"name": f"docker-overhead-{label}", "taskset": str(taskset),
                                    "repeats": repeats, "workers": 1, "strategies": [{"name": "baseline"}],
                                    "model": {"provider": "sim"}}))
    return path


def per_run_seconds(folder: Path, taskset: Path, repeats: int, label: str) -> float:
    config = load_config(experiment(folder, taskset, repeats, label))
    ctx = prepare(config, folder, folder / f"out-{label}-{time.monotonic_ns()}")
    start = time.monotonic()
    results = run_experiment(ctx, progress=False)
    return (time.monotonic() - start) / len(results)


def container_figures(image: str, samples: int) -> tuple[float, float, float]:
    spec = Container(image)
    with tempfile.TemporaryDirectory() as empty:
        mounts = {Path(empty): "/testbed"}
        starts, execs, evals = [], [], []
        for _ in range(samples):
            t0 = time.monotonic()
            name = start_container(spec, mounts)
            t1 = time.monotonic()
            exec_in(name, ["true"], 30, {}, 10_000)
            t2 = time.monotonic()
            remove_container(name)
            starts.append(time.monotonic() - t2 + t1 - t0)
            execs.append(t2 - t1)
            t3 = time.monotonic()
            run_once(spec, ["true"], mounts, 30, {}, 10_000, container_slots())
            evals.append(time.monotonic() - t3)
    return statistics.median(starts), statistics.median(execs), statistics.median(evals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default=None, help="default: the test image (build_image.sh --tag)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    if args.image is None:
        args.image = subprocess.run(["bash", str(ROOT / "tests" / "environments" / "build_image.sh"), "--tag"],
                                    check=True, capture_output=True, text=True).stdout.strip()
    problem = image_problem(args.image)
    if problem:
        raise SystemExit(f"docker_overhead: {problem}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        local = ROOT / "tasksets" / "smoke"
        docker = folder / "smoke-docker"
        shutil.copytree(local, docker)
        with (docker / "taskset.yaml").open("a") as fh:
            fh.write(f"environment:\n  backend: docker\n  image: {args.image}\n")
        local_s, docker_s = [], []
        for n in range(args.rounds):
            local_s.append(per_run_seconds(folder, local, args.repeats, f"local{n}"))
            docker_s.append(per_run_seconds(folder, docker, args.repeats, f"docker{n}"))
        start, exec_, fresh = container_figures(args.image, args.samples)
    load = subprocess.run(["cat", "/proc/loadavg"], capture_output=True, text=True).stdout.split()[:3]
    lo, do = statistics.median(local_s), statistics.median(docker_s)
    print(f"rounds: local {[round(s, 2) for s in local_s]} docker {[round(s, 2) for s in docker_s]}; load {load}")
    print(f"local_run_s={lo:.2f} docker_run_s={do:.2f} per_run_overhead_s={do - lo:.2f} "
          f"start_remove_s={start:.2f} exec_s={exec_:.2f} eval_container_s={fresh:.2f}")


if __name__ == "__main__":
    main()
