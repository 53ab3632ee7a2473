"""The environment keys of tasksets and instances: backend, image, limits; SWE-bench image names."""

from __future__ import annotations

import json
import threading

import pytest
import yaml

from ctxbench.harness.environments.docker import acquire_slot
from ctxbench.harness.errors import InputError
from ctxbench.harness.swebench.instances import swebench_image
from ctxbench.harness.tasks.taskset import load_taskset
from ctxbench.harness.records.taskset_records import Container, TasksetEnvironment


def test_a_local_environment_dumps_as_before_the_docker_keys():
    assert TasksetEnvironment().model_dump_json() == '{"python":null,"requirements":[]}'
    docker = TasksetEnvironment(backend="docker", image="img:1", pids=64)
    assert json.loads(docker.model_dump_json()) == {"python": None, "requirements": [], "backend": "docker",
                                                    "image": "img:1", "pids": 64}
    assert docker.container() == Container("img:1", "/testbed", "python", 4096, 2.0, 64)
    assert TasksetEnvironment().container() is None


def test_swebench_image_names_follow_swebench():
    assert swebench_image("django__django-11099") == "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"
    assert swebench_image("Org__Repo-1", "me") == "me/sweb.eval.x86_64.org_1776_repo-1:latest"


def _native(tmp_path, smoke_dir, environment):
    folder = tmp_path / "ts"
    import shutil
    shutil.copytree(smoke_dir, folder)
    data = yaml.safe_load((folder / "taskset.yaml").read_text())
    data["environment"] = environment
    (folder / "taskset.yaml").write_text(yaml.safe_dump(data))
    return folder


@pytest.mark.parametrize("environment, words", [
    ({"backend": "docker"}, "backend docker needs an image"),
    ({"backend": "docker", "image": "x", "requirements": ["pytest"]}, "requirements are for the local backend"),
    ({"image": "x"}, "image needs backend: docker"),
    ({"backend": "docker", "image": "x", "workdir": "testbed"}, "workdir must be an absolute path"),
    ({"backend": "podman"}, "backend"),
])
def test_wrong_environments_are_refused_at_load(tmp_path, smoke_dir, environment, words):
    with pytest.raises(InputError, match=words):
        load_taskset(_native(tmp_path, smoke_dir, environment))


def test_native_tasks_get_the_taskset_container(tmp_path, smoke_dir):
    taskset = load_taskset(_native(tmp_path, smoke_dir, {"backend": "docker", "image": "img:2", "memory_mb": 512}))
    assert {t.container for t in taskset.tasks} == {Container("img:2", memory_mb=512)}
    assert all(t.swebench is None for t in taskset.tasks)
    assert all(t.container is None for t in load_taskset(smoke_dir).tasks)


def test_instance_images_in_order_of_precedence(tmp_path):
    import subprocess
    repo = tmp_path / "repos" / "acme__lib"
    repo.mkdir(parents=True)
    (repo / "lib.py").write_text("x = 1\n")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    common = {"repo": "acme/lib", "base_commit": base, "patch": "", "test_patch": "", "problem_statement": "p",
              "FAIL_TO_PASS": ["t"], "PASS_TO_PASS": []}
    rows = [{"instance_id": "acme__lib-1", **common},
            {"instance_id": "acme__lib-2", "image": "row:img", **common},
            {"instance_id": "acme__lib-3", "image": "row:img", "environment": {"backend": "docker", "image": "own:img"},
             **common},
            {"instance_id": "acme__lib-4", "eval_script": "echo", "log_parser": "parse_log_pytest", **common}]
    path = tmp_path / "i.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    local = load_taskset(path, tmp_path / "repos")
    assert [t.container and t.container.image for t in local.tasks] == [None, None, "own:img", None]
    assert [t.swebench for t in local.tasks] == [None] * 4  # graded by the swebench package only in a container
    path.with_name("i.environment.yaml").write_text("backend: docker\n")
    images = [t.container.image for t in load_taskset(path, tmp_path / "repos").tasks if t.container]
    assert images == ["swebench/sweb.eval.x86_64.acme_1776_lib-1:latest", "row:img", "own:img",
                      "swebench/sweb.eval.x86_64.acme_1776_lib-4:latest"]
    path.with_name("i.environment.yaml").write_text("backend: docker\nimage: file:img\n")
    tasks = load_taskset(path, tmp_path / "repos").tasks
    assert [t.container.image for t in tasks if t.container] == ["file:img", "row:img", "own:img", "file:img"]
    assert tasks[3].swebench is not None and tasks[3].swebench.log_parser == "parse_log_pytest"


def test_container_slots_bound_containers_in_flight(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXBENCH_MAX_CONTAINERS", "1")
    held = acquire_slot(tmp_path)
    got = threading.Event()

    def second() -> None:
        acquire_slot(tmp_path).close()
        got.set()

    waiter = threading.Thread(target=second)
    waiter.start()
    assert not got.wait(1.0)  # the one slot is held
    held.close()
    waiter.join()
    assert got.is_set()
    monkeypatch.setenv("CTXBENCH_MAX_CONTAINERS", "0")
    with pytest.raises(InputError, match="CTXBENCH_MAX_CONTAINERS"):
        acquire_slot(tmp_path)
