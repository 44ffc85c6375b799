"""Every command of the README runs (issue 37): its fenced blocks, in order, in a scratch folder
against this checkout, on the ``cpu`` backend, as a new user without a GPU would type them.

What each block is, by conventions the README keeps where a reader sees them:

- a block whose first line starts with ``# GPU only`` needs an NVIDIA GPU: skipped, saying so;
- a ``python`` block whose first line is ``# <path>`` is a file: written to that path, for the
  blocks after it to use;
- the first command installs and ends in ``kernel-dashboard``, which serves until stopped: its
  installs must be the ones ``.ci/run`` makes before the tests run (so CI installs them in every
  run), and its server is started here until ``/_stcore/health`` answers;
- ``bash .ci/run`` is CI itself (``tests/unit/test_ci_venv.py`` runs its first steps), and
  ``python -m pytest -q`` is the suite this test belongs to;
- a fenced block without a language is a drawing (the layout), not a command;
- every other ``bash`` block runs with ``bash -e -o pipefail``, ``python`` being this
  interpreter.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.core.share.job import CONTENDED_LINE  # what a page's contention_line returns

from tests.e2e.conftest import _stop, free_port, wait_healthy

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
GPU_ONLY = "# GPU only"
CI_COMMAND = "bash .ci/run"
TEST_COMMAND = "python -m pytest -q"  # .ci/run greps the README for this exact line
#: A shell block's bound: a cold torch import and two small cpu jobs on a busy 2-core machine.
BLOCK_TIMEOUT_S = 300


@dataclass(frozen=True)
class Block:
    """One fenced block: its language (``""`` for none), body, and the line it starts on."""

    lang: str
    body: str
    line: int

    @property
    def first_line(self) -> str:
        return self.body.splitlines()[0] if self.body else ""

    def kind(self) -> str:
        """``gpu``, ``file``, ``dashboard``, ``ci``, ``suite``, ``drawing`` or ``shell``; ``?``
        for a block no convention covers."""
        if self.first_line.startswith(GPU_ONLY):
            return "gpu"
        if self.lang == "":
            return "drawing"
        if self.lang == "python" and re.fullmatch(r"# [\w./-]+\.py", self.first_line):
            return "file"
        if self.lang == "bash" and self.body.strip() == CI_COMMAND:
            return "ci"
        if self.lang == "bash" and self.body.strip() == TEST_COMMAND:
            return "suite"
        if self.lang == "bash" and self.body.rstrip().endswith("&& kernel-dashboard"):
            return "dashboard"
        if self.lang == "bash":
            return "shell"
        return "?"


def blocks() -> list[Block]:
    """The README's fenced blocks, in order."""
    text = README.read_text(encoding="utf-8")
    return [Block(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1)
            for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S)]


#: The README's example kernel file (step 6 of its five minutes), a user's first own kernel.
README_KERNELS = "my_kernels/scale.py"


def readme_file(name: str) -> str:
    """The text of the README's file block ``name`` (its first line ``# name``)."""
    found = [b.body for b in blocks() if b.kind() == "file" and b.first_line == f"# {name}"]
    assert len(found) == 1, f"the README has {len(found)} file blocks of {name}"
    return found[0]


def test_every_block_is_of_a_kind_the_test_knows() -> None:
    kinds = [(b.line, b.kind()) for b in blocks()]
    assert not [line for line, kind in kinds if kind == "?"], (
        f"README blocks no convention covers (line, kind): {kinds}; see this module's docstring")
    found = [kind for _, kind in kinds]
    assert found[:2] == ["dashboard", "ci"], f"the README starts with the two commands: {found}"
    assert {"gpu", "shell", "file", "suite"} <= set(found), found
    for block in blocks():  # a GPU backend exits 1 without a GPU: such a block says GPU only
        backends = set(re.findall(r'"backend": "(\w+)"', block.body))
        assert block.kind() == "gpu" or backends <= {"cpu"}, (block.line, backends)


def test_the_cuda_torch_warning_comes_before_the_command_that_installs_torch() -> None:
    """Issue 37: a reader learns that PyPI's Linux torch is the CUDA build (several GB) before
    the first command installs it, not after."""
    text = README.read_text(encoding="utf-8")
    first_install = text.index("pip install torch")
    assert -1 < text.find("several GB") < first_install
    assert -1 < text.find("download.pytorch.org/whl/cpu") < first_install


def _torch_installs(body: str) -> list[str]:
    """The ``pip install`` steps of a block's commands that install torch."""
    steps = re.split(r"&&|\n", body)
    return [s.split("#")[0].strip() for s in steps if re.search(r"pip install\b.*\btorch\b", s)]


def test_every_torch_install_names_the_index_of_its_build() -> None:
    """Issue 37: PyPI's Linux torch is the CUDA build, pinned or not, so a block pasted on a
    machine without a GPU installs the CPU build only where it names the CPU index; a GPU block
    names a CUDA index (cuNNN). Every README block that installs torch says which."""
    found = []
    for block in blocks():
        for step in _torch_installs(block.body):
            index = re.search(r"--index-url (\S+)", step)
            assert index, f"README line {block.line}: {step!r} takes PyPI's torch (a CUDA build)"
            want = r"https://download\.pytorch\.org/whl/cu\d+" if block.kind() == "gpu" else (
                r"https://download\.pytorch\.org/whl/cpu")
            assert re.fullmatch(want, index.group(1)), (block.line, block.kind(), step)
            found.append(block.kind())
    assert {"dashboard", "gpu"} <= set(found), found


def test_the_first_command_installs_what_ci_installs_and_serves(tmp_path: Path) -> None:
    """Its pip installs are ones ``.ci/run`` makes (the same pins; CI adds the test extra),
    and ``kernel-dashboard`` from a folder of its own serves the bundled results."""
    (first,) = [b for b in blocks() if b.kind() == "dashboard"]
    steps = [s.strip() for s in first.body.strip().split("&&")]
    assert steps[:2] == ["python3 -m venv .venv", ". .venv/bin/activate"], steps
    assert steps[-1] == "kernel-dashboard", steps
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    for step in steps[2:-1]:
        # PIP_RETRIES=1: without a network pip's 5 retries kept a new user ~2 min (issue 37)
        env, found, spec = step.partition("pip install ")
        assert found and env in ("", "PIP_RETRIES=1 "), step
        ci_spec = '-e ".[test]"' if spec == "-e ." else spec
        assert f"\n{env}pip install -q {ci_spec}\n" in ci, \
            f".ci/run does not install {spec!r} as the README does"

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "server.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KPROF_")}
    with log.open("wb") as out:
        proc = subprocess.Popen([Path(sys.executable).parent / "kernel-dashboard", "--port",
                                 str(port)], cwd=tmp_path, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_healthy(proc, url, log)  # type: ignore[arg-type]
        with urllib.request.urlopen(url, timeout=30) as page:
            assert page.status == 200
    finally:
        _stop(proc)  # type: ignore[arg-type]


def test_the_commands_run_without_a_gpu(tmp_path: Path) -> None:
    """The five-minute path's files and shell blocks, in order, in one scratch folder: every
    block exits 0, every job it writes ends done, and the gate wrote its summary."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KPROF_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    ran = skipped = 0
    for block in blocks():
        kind = block.kind()
        if kind == "file":
            path = tmp_path / block.first_line.removeprefix("# ")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.body, encoding="utf-8")
        elif kind == "shell":
            proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.body], cwd=tmp_path,
                                  env=env, capture_output=True, text=True,
                                  timeout=BLOCK_TIMEOUT_S, check=False)
            assert proc.returncode == 0, (f"README line {block.line}: exit {proc.returncode}\n"
                                          f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
            ran += 1
        elif kind == "gpu":
            skipped += 1
    assert ran and skipped, (ran, skipped)
    manifests = sorted((tmp_path / "results").glob("*/manifest.json"))
    assert manifests, "the README's commands wrote no job"
    for path in manifests:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        assert manifest["status"] == "done", (path.parent.name, manifest.get("error"))
        assert manifest["spec"]["backend"] == "cpu"
    # History lists a job by its label: the gate's two jobs were both "gate baseline"
    labels = {path.parent.name: json.loads(path.read_text(encoding="utf-8"))["spec"].get("label")
              for path in manifests}
    assert labels.get("candidate") == "gate candidate", labels
    assert len(set(labels.values())) == len(labels), labels
    gate = tmp_path / "results" / "gate.md"  # in the store (ignored by git), not the checkout's root
    assert gate.read_text(encoding="utf-8").startswith("## Kernel regression gate")
    _assert_too_short_to_judge(tmp_path / "results", gate.read_text(encoding="utf-8"))
    assert not [p.name for p in tmp_path.iterdir() if p.is_file()], "files left beside results/"


def _assert_too_short_to_judge(results: Path, gate: str) -> None:
    """Step 5's stated outcome, true on a quiet and a busy machine: each gate job's contention
    check says it is too short to judge (its figures, and its run audit in the verdict's own
    words), so it is never warned and the gate names no host contention; the README's words
    and threshold are the code's."""
    from profiling_worker.backends.cpu import CONTENTION_MIN_CPU_NS, CONTENTION_THRESHOLD
    from profiling_worker.bundle.loader import load_bundle
    from profiling_worker.bundle.schema import backends as B, columns as C, run_audit as A

    said = B.too_short_to_judge(0, CONTENTION_MIN_CPU_NS, CONTENTION_THRESHOLD).split(":")[0]
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert f'reads "{said}"' in text and f"under the {CONTENTION_MIN_CPU_NS / 1e6:g} ms" in text
    for name in ("base", "candidate"):
        figures = json.loads((results / name / C.MANIFEST_FILE).read_text(encoding="utf-8"))[
            "backend"]["host_contention"]
        assert figures["judged"] is False and figures["warning"] is None, (name, figures)
        audit = load_bundle(results / name).table(C.TABLE_RUN_AUDIT)
        evidence = set(audit[audit[A.CHECK] == A.HOST_CONTENTION.value][A.EVIDENCE])
        assert evidence == {B.too_short_to_judge(figures["cpu_ns"], CONTENTION_MIN_CPU_NS,
                                                 CONTENTION_THRESHOLD)}, evidence
    assert "backend.host_contention" not in gate  # no contention difference named


def test_gpu_only_blocks_are_skipped_saying_why() -> None:
    gpu = [b for b in blocks() if b.kind() == "gpu"]
    if not gpu:
        pytest.fail("no block is marked '# GPU only': the README's GPU path is missing")
    pytest.skip(f"{len(gpu)} README blocks need an NVIDIA GPU (lines "
                f"{', '.join(str(b.line) for b in gpu)}): '# GPU only'")


def _without_code(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors of ``page``: lower case, punctuation dropped, spaces to ``-``."""
    headings = re.findall(r"^#+ (.+)$", _without_code(page.read_text(encoding="utf-8")), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_every_link_of_the_readme_and_docs_resolves() -> None:
    """The README links to docs/ for every detail it moved there: each relative link of the
    README and of docs/ names a file of the repository, and an anchor that page has."""
    broken = []
    for doc in [README, *sorted((REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", _without_code(doc.read_text(encoding="utf-8"))):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            page = (doc.parent / path).resolve() if path else doc
            if not page.exists() or (anchor and page.suffix == ".md"
                                     and anchor not in _anchors(page)):
                broken.append(f"{doc.relative_to(REPO)}: {target}")
    assert not broken, broken


def test_the_five_minutes_name_the_contention_line_as_the_page_shows_it() -> None:
    """Issue 37 (06_dblclick_after.png): step 2 said "a yellow box says the CPU was
    contended"; the page's yellow box is the host wall-clock notice, and the contention is a
    fold's one line (brown text in a white box) that holds it. The README quotes that line as
    the page writes it and calls only the wall-clock notice yellow."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    line = " ".join(CONTENDED_LINE.split())
    assert line in text
    said = text[text.index("every page says so"):text.index(line)]
    assert "yellow box" in said and "white box with brown text" in said
    assert "yellow box says the CPU was contended" not in text

