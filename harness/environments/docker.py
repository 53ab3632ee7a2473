"""Containers through the docker CLI: start one for a run, run a command in it, remove it, and sweep
what dead ctxbench processes left behind.

Every container ctxbench starts carries the label `ctxbench.owner=<pid>.<start time>` of the process
that started it (as workspace folders and cgroups do), so `sweep_containers` tells a dead owner's
containers from a live one's. How many containers are in flight at once, across processes, is bounded
by `CTXBENCH_MAX_CONTAINERS` (default 8): `acquire_slot` holds one of that many lock files in a folder
every process shares (the workspace gives `$CTXBENCH_CACHE/container-slots`).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO, Iterator

from ctxbench.harness.errors import InputError
from ctxbench.harness.sandbox import ProcessResult, ResourceLimits, Sandbox, owner_tag, process_start, run_contained
from ctxbench.harness.records.taskset_records import Container

__all__ = ["LABEL", "docker_problem", "image_problem", "image_id", "image_tree", "start_container", "exec_in",
           "run_once", "remove_container", "sweep_containers", "acquire_slot", "container_slot", "max_containers",
           "owned_containers", "env_args", "timed"]

LABEL = "ctxbench.owner"
_CLIENT = Sandbox("none", limits=ResourceLimits(address_space=1 << 40, processes=4096))
"""The docker client itself runs uncontained: the container is the containment (its limits below)."""
_GRACE_S = 30.0
"""How much longer than the command's own timeout the client may take (container start, teardown)."""


def _docker(*args: str, timeout_s: float = 120.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout_s)


def docker_problem() -> str | None:
    """Why containers cannot run here (no docker CLI, no daemon), or None."""
    if shutil.which("docker") is None:
        return "the docker command is not installed (Debian: apt-get install docker.io)"
    try:
        info = _docker("info", "--format", "{{.ServerVersion}}", timeout_s=30)
    except subprocess.TimeoutExpired:
        return "the docker daemon does not answer (docker info timed out)"
    if info.returncode != 0:
        return f"the docker daemon is not reachable ({' '.join(info.stderr.split())[:200]}); start dockerd"
    return None


def image_problem(image: str) -> str | None:
    """Why containers cannot start from `image` (docker missing, image not present locally), or None."""
    problem = docker_problem()
    if problem:
        return problem
    if _docker("image", "inspect", "--format", "{{.Id}}", image, timeout_s=60).returncode != 0:
        return f"docker image {image} is not present (docker pull it, or build it; see docs/environments.md)"
    return None


_IMAGE_IDS: dict[str, str] = {}


def image_id(image: str) -> str:
    """The image's id (`sha256:...`), asked of docker once per process and image name.

    Raises:
        RuntimeError: docker does not know the image.
    """
    if image not in _IMAGE_IDS:
        found = _docker("image", "inspect", "--format", "{{.Id}}", image, timeout_s=60)
        if found.returncode != 0:
            raise RuntimeError(f"docker image {image} is not present: {found.stderr.strip()[:300]}")
        _IMAGE_IDS[image] = found.stdout.strip()
    return _IMAGE_IDS[image]


def image_tree(spec: Container, cache: Path) -> Path | None:
    """The image's own `workdir` (e.g. /testbed), as the image has it: what it built in place there
    (compiled extensions, generated files) included. Copied out of a container created (never
    started) from the image, once per image id and workdir on this machine, and kept under `cache`
    for every later run and process; None when the image has no such folder.

    Only folders, regular files and symlinks are kept (links as links, as in the image); the image's
    own `.git` too (the caller decides what to take).

    Raises:
        RuntimeError: docker could not create the container or copy the folder out.
    """
    workdir = PurePosixPath(spec.workdir)
    if not workdir.is_absolute() or workdir == PurePosixPath("/"):
        return None
    ident = image_id(spec.image).rpartition(":")[2][:16]
    key = f"{ident}-{hashlib.sha256(str(workdir).encode()).hexdigest()[:8]}"
    target = cache / key
    if (target / ".complete").exists():
        return target / "tree" if (target / "tree").is_dir() else None
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one copier; the others wait and then find it complete
        if not (target / ".complete").exists():
            for left in cache.glob(f".partial-{key}-*"):  # a copier of this key killed mid-copy: the lock is ours
                shutil.rmtree(left, ignore_errors=True)
            partial = Path(tempfile.mkdtemp(prefix=f".partial-{key}-", dir=cache))
            try:
                found = _copy_out(spec.image, str(workdir), partial / "tree")
                (partial / ".complete").write_text(f"{spec.image}\n{workdir}\n{'' if found else 'absent'}\n")
                shutil.rmtree(target, ignore_errors=True)
                os.rename(partial, target)
            finally:
                shutil.rmtree(partial, ignore_errors=True)
    return target / "tree" if (target / "tree").is_dir() else None


def _copy_out(image: str, workdir: str, dest: Path) -> bool:
    """Extract `workdir` of a container created from `image` into `dest`; False if the image has none."""
    name = _name("copy")
    made = _docker("create", "--name", name, "--label", f"{LABEL}={owner_tag()}", "--network", "none",
                   "--entrypoint", "true", image)
    if made.returncode != 0:
        remove_container(name)
        raise RuntimeError(f"docker could not create a container from {image}: {made.stderr.strip()[:500]}")
    top = PurePosixPath(workdir).name
    try:
        with subprocess.Popen(["docker", "cp", f"{name}:{workdir}", "-"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            try:
                with tarfile.open(fileobj=proc.stdout, mode="r|") as archive:
                    for member in archive:
                        rel = _member_path(member, top)
                        if rel is None:
                            continue
                        member.name = rel
                        if member.islnk():
                            linked = _member_path_name(member.linkname, top)
                            if linked is None:
                                continue
                            member.linkname = linked
                        if _FILTERS:  # screened above; links to absolute paths are the image's, kept
                            archive.extract(member, dest, filter="fully_trusted")
                        else:
                            archive.extract(member, dest)
            except tarfile.ReadError:
                pass  # no archive at all: docker said why on stderr
            error = proc.stderr.read().decode(errors="replace")
        if proc.returncode != 0:
            if "Could not find the file" in error or "No such" in error:
                return False
            raise RuntimeError(f"docker could not copy {workdir} out of {image}: {error.strip()[:500]}")
    finally:
        remove_container(name)
    dest.mkdir(parents=True, exist_ok=True)
    return True


_FILTERS = hasattr(tarfile, "fully_trusted_filter")
"""Whether this Python's tarfile takes extraction filters (3.11.4 on)."""


def _member_path_name(name: str, top: str) -> str | None:
    parts = PurePosixPath(name).parts
    if not parts or parts[0] != top or any(p in ("..", "") for p in parts) or len(parts) == 1:
        return None
    return str(PurePosixPath(*parts[1:]))


def _member_path(member: tarfile.TarInfo, top: str) -> str | None:
    """The member's path inside the workdir, or None for the workdir itself, a path that leaves it and
    anything but a folder, regular file or link."""
    if not (member.isdir() or member.isreg() or member.issym() or member.islnk()):
        return None
    return _member_path_name(member.name, top)


def max_containers() -> int:
    """Containers in flight at once on this machine ($CTXBENCH_MAX_CONTAINERS, default 8)."""
    raw = os.environ.get("CTXBENCH_MAX_CONTAINERS", "8")
    if not raw.isdigit() or int(raw) < 1:
        raise InputError(f"CTXBENCH_MAX_CONTAINERS={raw!r}: expected a whole number of at least 1")
    return int(raw)


def acquire_slot(folder: Path) -> IO[str]:
    """One of `max_containers()` slots (lock files in `folder`, shared by every ctxbench process), held
    until the returned file is closed; waits for a free one. A process that dies frees its slots with it."""
    folder.mkdir(parents=True, exist_ok=True)
    limit = max_containers()
    while True:
        for n in range(limit):
            fh = open(folder / f"{n}.lock", "w")
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.close()
                continue
            return fh
        time.sleep(0.2)


@contextmanager
def container_slot(folder: Path) -> Iterator[None]:
    """Hold a slot (`acquire_slot`) for the block."""
    slot = acquire_slot(folder)
    try:
        yield
    finally:
        slot.close()


def _create_args(spec: Container, name: str, mounts: dict[Path, str]) -> list[str]:
    """`docker run` options shared by every ctxbench container: label, no network, limits, mounts."""
    args = ["--name", name, "--label", f"{LABEL}={owner_tag()}", "--init", "--network", "none",
            "--memory", f"{spec.memory_mb}m", "--memory-swap", f"{spec.memory_mb}m", "--cpus", str(spec.cpus),
            "--pids-limit", str(spec.pids), "--workdir", spec.workdir, "--security-opt", "no-new-privileges",
            "--cap-drop", "NET_RAW", "--cap-drop", "SYS_ADMIN"]
    for host, inside in mounts.items():
        args += ["--mount", f"type=bind,source={host},target={inside}"]
    return args


def _name(kind: str) -> str:
    return f"ctxbench-{kind}-{owner_tag().replace('.', '-')}-{uuid.uuid4().hex[:8]}"


def start_container(spec: Container, mounts: dict[Path, str]) -> str:
    """Start a long-lived container for a run (its main process sleeps); returns its name.

    Raises:
        RuntimeError: docker could not start it (docker's own words).
    """
    name = _name("run")
    made = _docker("run", "-d", *_create_args(spec, name, mounts), "--entrypoint", "sleep", spec.image,
                   "infinity")
    if made.returncode != 0:
        remove_container(name)
        raise RuntimeError(f"docker could not start a container from {spec.image}: {made.stderr.strip()[:500]}")
    return name


def env_args(env: dict[str, str]) -> list[str]:
    """`docker exec`/`run` options that set `env` in the container."""
    return [arg for key, value in sorted(env.items()) for arg in ("--env", f"{key}={value}")]


def timed(argv: list[str], timeout_s: float) -> list[str]:
    """`argv` killed inside the container at the timeout, its process group with it (coreutils `timeout`)."""
    return ["timeout", "--kill-after=2", f"{max(1, int(timeout_s))}", *argv]


_SWEPT = ('timeout --kill-after=2 "$0" "$@"; code=$?; for pass in 1 2; do for d in /proc/[0-9]*; do '
          'read -r s < "$d/stat" 2>/dev/null || continue; s=${s##*) }; set -- $s; '
          '[ "$4" = "$$" ] && [ "${d#/proc/}" != "$$" ] && kill -KILL "${d#/proc/}" 2>/dev/null; done; done; '
          'exit $code')
"""`sh -c _SWEPT SECONDS ARGV...`: ARGV under `timeout`, then every process still in the session of the
`docker exec` (its leader is this shell) killed, as a local run's sandbox kills what a command leaves
behind; with builtins only (`read`, `kill`: nothing to fork when the pids limit is full), read from
/proc/PID/stat. What the command moved to a session of its own (setsid) is left, as a daemon would be."""


def exec_in(name: str, argv: list[str], timeout_s: float, env: dict[str, str], output_cap: int) -> ProcessResult:
    """Run `argv` in the running container `name`, with a timeout inside it and one on the client; what
    it leaves running (its children, a fork bomb's processes) is killed when it ends, so that they hold
    none of the container's process limit for the next command."""
    command = ["docker", "exec", *env_args(env), name, "sh", "-c", _SWEPT, f"{max(1, int(timeout_s))}", *argv]
    return _client(command, timeout_s, output_cap)


def run_once(spec: Container, argv: list[str], mounts: dict[Path, str], timeout_s: float, env: dict[str, str],
             output_cap: int, slots: Path) -> ProcessResult:
    """Run `argv` in a fresh container from the image (holding a slot in `slots`), removed afterwards
    whatever happened."""
    name = _name("eval")
    command = ["docker", "run", *_create_args(spec, name, mounts), *env_args(env), "--entrypoint", "timeout",
               spec.image, *timed(argv, timeout_s)[1:]]
    try:
        with container_slot(slots):
            return _client(command, timeout_s, output_cap)
    finally:
        remove_container(name)


def _client(command: list[str], timeout_s: float, output_cap: int) -> ProcessResult:
    result = run_contained(command, Path("/"), timeout_s + _GRACE_S, dict(os.environ), _CLIENT, output_cap)
    fired = result.exit_code in (124, 137) and result.seconds >= timeout_s  # `timeout` in the container
    if fired and not result.timed_out:
        return ProcessResult(-9, result.output, True, result.seconds, result.omitted_bytes, result.limit_hit)
    if result.exit_code == 125 and "docker:" in result.output[:400]:
        raise RuntimeError(f"docker could not run the command: {result.output.strip()[:500]}")
    return result


def remove_container(name: str) -> None:
    """Remove the container (killed first if running); nothing when it is gone already."""
    try:
        _docker("rm", "-f", "-v", name, timeout_s=120)
    except subprocess.TimeoutExpired:
        pass


def owned_containers() -> list[tuple[str, str]]:
    """(name, owner tag) of every container that ctxbench started, running or not."""
    if shutil.which("docker") is None:
        return []
    try:
        listed = _docker("ps", "-a", "--filter", f"label={LABEL}", "--format",
                         f'{{{{.Names}}}}\t{{{{.Label "{LABEL}"}}}}', timeout_s=60)
    except subprocess.TimeoutExpired:
        return []
    if listed.returncode != 0:
        return []
    return [(name, owner) for name, _, owner in (line.partition("\t") for line in listed.stdout.splitlines())]


def sweep_containers() -> int:
    """Remove the containers of ctxbench processes that no longer run (a runner killed with SIGKILL);
    returns how many. The owner is the pid and start time in the label, so a reused pid protects none."""
    removed = 0
    for name, owner in owned_containers():
        pid, _, start = owner.partition(".")
        if pid.isdigit() and process_start(int(pid)) == start:
            continue
        remove_container(name)
        removed += 1
    return removed
