"""1,000 malformed import files through ``importing.import_nsight_output``: mutated nsight-python
CSVs (truncated, wrong/missing/duplicate columns, huge/NaN/inf values, unicode, binary junk,
empty), JSON and random bytes under CSV names, and an H200 .ncu-rep cut at random points.

Each import ends as a bundle (with a manifest) or ImportFailed, never another exception, never
a hang; a failed import leaves nothing in the output folder. The .ncu-rep cases run in a child
process, so a crash inside the native report reader is seen as a crash, not as a dead pytest.
"""

from __future__ import annotations

import gzip
import json
import multiprocessing
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from profiling_worker.importing import ImportFailed, import_nsight_output
from profiling_worker.bundle.schema.manifest import read_manifest
from tests.scenarios import scenario_report

REPO = Path(__file__).resolve().parents[2]
REF = REPO / "tests" / "fixtures" / "reference" / "h200-nsight-0.9.6-matmul"
NCU_REP_GZ = scenario_report("h200-ncu-j1-fp16")
N_CSV = 900
N_REP = 100
MAX_CALL_S = 30.0
WORKERS = 2  # processes checking the CSV cases

JUNK = ["", "nan", "inf", "-inf", "1e999", "-1e308", "1e308", "0x1F", "١٢٣", "💥", "\u202e",
        "a,b", '"', "\\N", "None", "True", " ", "9" * 400, "-0", "1_000", "\x00", "é" * 50]


def _mutate(rng: random.Random, text: str, name: str) -> tuple[str, bytes]:
    lines = text.splitlines()
    header, rows = lines[0].split(","), [ln.split(",") for ln in lines[1:]]
    kind = rng.randrange(16)
    if kind == 0:  # truncated at a random byte
        data = text.encode()
        return name, data[:rng.randrange(len(data))]
    if kind == 1:  # a column dropped
        i = rng.randrange(len(header))
        keep = lambda r: [v for j, v in enumerate(r) if j != i]  # noqa: E731
        return name, "\n".join(",".join(keep(r)) for r in [header, *rows]).encode()
    if kind == 2:  # a column renamed / duplicated / emptied
        h = list(header)
        i = rng.randrange(len(h))
        h[i] = rng.choice(["", h[(i + 1) % len(h)], "Värde", "Value ", "AvgValue", "Config", "n"])
        return name, "\n".join(",".join(r) for r in [h, *rows]).encode()
    if kind == 3:  # junk values in random cells
        for _ in range(rng.randrange(1, 6)):
            r = rng.choice(rows)
            r[rng.randrange(len(r))] = rng.choice(JUNK)
        return name, "\n".join(",".join(r) for r in [header, *rows]).encode()
    if kind == 4:  # huge values in Value / AvgValue / n
        for r in rows:
            for i, col in enumerate(header):
                if col in ("Value", "AvgValue", "n", "StdDev", "NumRuns") and rng.random() < 0.5:
                    r[i] = rng.choice(["1e308", "-1e308", "1e999", "123456789012345678901234567890",
                                       "-1", "0", "2.5"])
        return name, "\n".join(",".join(r) for r in [header, *rows]).encode()
    if kind == 5:
        return name, b""
    if kind == 6:  # header only
        return name, (",".join(header) + "\n").encode()
    if kind == 7:  # random bytes
        return name, bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4000)))
    if kind == 8:  # JSON under a CSV name, or a .json file
        obj = [dict(zip(header, r)) for r in rows[:5]]
        return rng.choice([name, name.replace(".csv", ".json")]), json.dumps(obj).encode()
    if kind == 9:  # other delimiters / CRLF / BOM
        sep = rng.choice([";", "\t", "|"])
        body = "\r\n".join(sep.join(r) for r in [header, *rows])
        return name, (b"\xef\xbb\xbf" if rng.random() < 0.5 else b"") + body.encode()
    if kind == 10:  # rows of the wrong length
        r = rng.choice(rows)
        r.extend(["x"] * rng.randrange(1, 4)) if rng.random() < 0.5 else r.pop()
        return name, "\n".join(",".join(r) for r in [header, *rows]).encode()
    if kind == 11:  # unicode everywhere
        return name, text.replace("matmul", rng.choice(["матмул", "行列積", "m\u0301", "🧮"])).encode()
    if kind == 12:  # latin-1 / utf-16
        return name, text.replace("matmul", "mätmul").encode(rng.choice(["latin-1", "utf-16"]))
    if kind == 13:  # many rows
        return name, "\n".join([",".join(header)] + [",".join(rng.choice(rows))
                                                    for _ in range(rng.randrange(100, 3000))]).encode()
    if kind == 14:  # quoted fields with newlines and quotes
        r = rng.choice(rows)
        r[rng.randrange(len(r))] = '"a\nb ""q"""'
        return name, "\n".join(",".join(r) for r in [header, *rows]).encode()
    return name, text.encode()  # unchanged (must import)


def _check(sources: list[Path], out: Path, job_id: str) -> str:
    t0 = time.perf_counter()
    try:
        bundle = import_nsight_output(sources, out, job_id)
    except ImportFailed as exc:
        assert exc.message and exc.kind == "import_failed"
        assert not (out / job_id).exists()  # a failed import leaves nothing behind
        result = "failed"
    else:
        assert read_manifest(bundle)["status"] == "done"
        result = "done"
    assert time.perf_counter() - t0 < MAX_CALL_S, "an import took too long (hang?)"
    return result


def test_malformed_csv_and_json_files(tmp_path: Path) -> None:
    rng = random.Random(20270105)
    originals = {p.name: p.read_text(encoding="utf-8")
                 for p in (REF / "profiled_data-mm-0.csv", REF / "processed_data-mm-0.csv")}
    cases = []
    (tmp_path / "out").mkdir()  # made before the two processes import into it
    for i in range(N_CSV):
        case = tmp_path / f"case{i}"
        case.mkdir()
        sources = []
        for name, text in originals.items():
            if rng.random() < 0.6 or not sources:
                fname, data = _mutate(rng, text, name)
                (case / fname).write_bytes(data)
                sources.append(case / fname)
        cases.append((sources, tmp_path / "out", f"imp-{i}"))
    # The imports are independent and CPU-bound: two forked processes use both cores of the
    # CI machine (a failed check is raised here with its message).
    # SIGTERM's default action in the workers, whatever the pytest process holds: Pool's
    # terminate kills them with it
    with multiprocessing.get_context("fork").Pool(
            WORKERS, initializer=signal.signal, initargs=(signal.SIGTERM, signal.SIG_DFL)) as pool:
        outcomes = Counter(pool.starmap(_check, cases, chunksize=10))
    assert outcomes["failed"] > N_CSV // 2 and outcomes["done"] > 10, outcomes


REP_CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from profiling_worker.importing import ImportFailed, import_nsight_output
out = Path(sys.argv[2])
for path in sorted(Path(sys.argv[3]).glob("*.ncu-rep"), key=lambda p: int(p.stem[3:])):
    t0 = time.perf_counter()
    try:
        import_nsight_output([path], out, path.stem)
        res = "done"
    except ImportFailed as exc:
        res = "failed" if not (out / path.stem).exists() else "failed-left-files"
    except BaseException as exc:
        res = "raised %s: %s" % (type(exc).__name__, str(exc)[:200])
    print(json.dumps({"case": path.stem, "result": res, "s": time.perf_counter() - t0}),
          flush=True)
'''


def test_truncated_ncu_reports(tmp_path: Path) -> None:
    data = gzip.decompress(NCU_REP_GZ.read_bytes())
    rng = random.Random(7)
    cases = tmp_path / "reps"
    cases.mkdir()
    cuts = sorted({0, 1, 16, 64, len(data) - 1, *(rng.randrange(len(data)) for _ in range(N_REP))})
    for i, cut in enumerate(cuts[:N_REP]):
        (cases / f"rep{i}.ncu-rep").write_bytes(data[:cut])
    proc = subprocess.run([sys.executable, "-c", REP_CHILD, str(REPO), str(tmp_path / "out"),
                           str(cases)], capture_output=True, text=True, timeout=600)
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0, (f"the child died (code {proc.returncode}) after "
                                  f"{len(results)} reports: {proc.stderr[-2000:]}")
    assert len(results) == min(N_REP, len(cuts))
    bad = [r for r in results if r["result"] not in ("done", "failed")]
    assert not bad, bad[:5]
    assert max(r["s"] for r in results) < MAX_CALL_S


@pytest.mark.parametrize("name", ["spec.py", "evil.pkl", "notes.txt", "../escape.csv"])
def test_files_that_are_not_nsight_output_are_refused(tmp_path: Path, name: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    path = src / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"import os; os.system('touch /tmp/pwned')\n")
    with pytest.raises(ImportFailed):
        import_nsight_output([path], tmp_path / "out", "imp-x")
    assert not (tmp_path / "out" / "imp-x").exists()


@pytest.mark.parametrize("job_id", ["../x", "/abs", "a/b", "..", "", "x" * 200])
def test_import_job_ids_cannot_escape(tmp_path: Path, job_id: str) -> None:
    with pytest.raises(ImportFailed):
        import_nsight_output([REF / "profiled_data-mm-0.csv"], tmp_path / "out", job_id)
    assert not (tmp_path / "x").exists()
