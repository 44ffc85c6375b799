"""Files page: every bundle file with its size and a lazy download."""

from __future__ import annotations

from pathlib import Path

from apptest_helpers import texts, unescape

from app.core import numbers
from tests.scenarios import SCENARIOS, scenario_report

JOB = "20261129-230000-matmul-0001"  # the seeded cpu bundle (conftest)


def test_every_file_listed_with_download(seeded, app) -> None:
    at = app("files")
    assert not at.exception
    text = texts(at)
    for name in ("manifest.json", "spec.json", "events.jsonl", "tables/runs.parquet",
                 "tables/aggregated.csv"):
        assert f"`{name}`" in text
    files = [m.value for m in at.markdown if m.value.startswith("`")]
    buttons = at.get("download_button")
    # an empty file (this job's worker.log, issue 37) is listed, not offered
    empty = [p for p in (seeded["results"] / JOB).rglob("*") if p.is_file() and not p.stat().st_size]
    assert len(buttons) == len(files) - len(empty) + 3  # + the zip, the report, the timeline
    assert any(b.proto.label.startswith("Download the timeline") for b in buttons)
    assert "Download the report (self-contained HTML)" in [b.proto.label for b in buttons]
    assert "bytes" in text
    zip_label = at.get("download_button")[0].proto.label
    assert "Download the whole bundle (zip" in zip_label
    total = sum(p.stat().st_size for p in (seeded["results"] / JOB).rglob("*") if p.is_file())
    assert total < 100_000  # a tiny cpu job: its size in kB, not "0.0 MB"
    # no route here: the CSVs the zip adds are counted, their size known when made (the
    # Parquet file's size is no bound of its CSV's, and making each at load was slow)
    tables = [p.stem for p in (seeded["results"] / JOB / "tables").glob("*.parquet")]
    assert (f"{numbers.fmt_bytes(total)} before compression, and {len(tables)} CSVs made on "
            "download (size known when made))") in zip_label
    assert " kB before" in zip_label
    assert "nsight/" not in text  # the notes on imported originals and gzipped reports:
    # neither is for a local cpu job


def test_a_new_bundles_csv_is_made_on_download(seeded, app, monkeypatch) -> None:
    """Issue 40: the worker writes each table's Parquet file only. The page lists each table's
    CSV all the same, made on download, and its download (through the route, as under
    ``kernel-dashboard``) is the CSV made from the Parquet file; the zip says it adds them."""
    import io

    import pandas as pd

    from app.core.download_grants import GRANTS, DownloadKind
    from app.streamlit_patches import download_route
    from profiling_worker.bundle.writer import table_csv

    bundle = seeded["results"] / JOB
    tables = sorted(p.name for p in (bundle / "tables").iterdir())
    assert tables and all(name.endswith(".parquet") for name in tables)
    monkeypatch.setitem(download_route._state, "serving", True)
    at = app("files")
    assert not at.exception
    text = texts(at)
    assert "`tables/runs.csv`" in text and "made on download" in text
    links = {b.proto.label: b.proto.url for b in at.get("link_button")}
    assert f"and {len(tables)} CSVs made on download (size known when made))" in next(
        label for label in links if label.startswith("Download the whole bundle"))
    grants = [GRANTS.lookup(b.proto.url.rsplit("/", 1)[1], lambda sid: True)
              for b in at.get("link_button") if b.proto.label == "Download"]
    made = {g.relpath: g for g in grants if g is not None and g.kind is DownloadKind.CSV}
    assert sorted(made) == [f"tables/{name.removesuffix('.parquet')}.csv" for name in tables]
    assert made["tables/runs.csv"].filename == "tables_runs.csv"
    chunks, size = download_route.open_download(made["tables/runs.csv"])
    body = b"".join(chunks)
    assert body == table_csv(bundle, "runs") and size == len(body)
    pd.testing.assert_frame_equal(pd.read_csv(io.BytesIO(body)),
                                  pd.read_parquet(bundle / "tables" / "runs.parquet"),
                                  check_dtype=False)


def test_an_empty_worker_log_is_listed_as_empty_not_offered(store, monkeypatch, app) -> None:
    """Issue 37: a 0-byte worker.log was offered for download and opened in an expander."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    job = "h200-events-j1-fp16"  # its worker logged nothing (tests/fixtures/bundles/README.md)
    assert (SCENARIOS / job / "worker.log").stat().st_size == 0
    at = app("files", query={"job": job})
    assert not at.exception, at.exception
    files = [m.value for m in at.markdown if m.value.startswith("`")]
    assert "`worker.log`" in files and "empty: nothing to download" in texts(at)
    per_file = [b for b in at.get("download_button") if b.key.startswith("files-download-")]
    assert len(per_file) == len(files) - 1
    assert "worker.log (last 200 lines)" not in [e.label for e in at.expander]


def test_ncu_bundle_offers_ncu_rep_and_summary(store, monkeypatch, app) -> None:

    monkeypatch.setenv("KPROF_BUNDLED_DIR",
                       str(SCENARIOS))
    at = app("files", query={"job": "h200-ncu-j1-fp16"})  # the scenario that kept its report
    assert not at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels.count("Download .ncu-rep") == 1
    # beside the zip: its report stays gzipped, which ncu_report reads as empty (issue 39)
    assert ("The zip keeps the Nsight Compute report gzipped "
            "(`nsight/ncu-output-profiled-0.ncu-rep.gz`)") in texts(at)
    assert "reads a `.gz` as an empty report" in texts(at)
    assert ".ncu-rep summary" in [h.value for h in at.subheader]
    overview, kernels = (d.value for d in at.dataframe)
    assert dict(zip(overview["Item"], overview["Value"]))["Launches"] == "40"
    assert len(kernels) == 3 and kernels["Launches"].sum() == 40
    assert "Rule results: none" in texts(at)


def test_imported_originals_are_kept_verbatim_and_named_as_uploads(store, app, tmp_path) -> None:
    """An annotation that is a spreadsheet formula: the stored upload (and its copy in the zip)
    stays byte-identical and is offered as the original upload; the dashboard's CSVs and the
    page say which is which."""
    import sys
    import zipfile

    import pandas as pd

    from app.core.bundle_files import ORIGINALS_NOTE, download_name, table_csv_file, zip_bundle
    from profiling_worker.bundle.loader import load_bundle
    from app.services import import_client
    from tests.hostile import NSPY_CSV

    formula = '=HYPERLINK("http://evil.example","x")'
    frame = pd.read_csv(NSPY_CSV)
    frame["Annotation"] = formula
    upload = tmp_path / "profiled_data-formula-0.csv"
    frame.to_csv(upload, index=False)
    (outcome,) = import_client.run_import([upload], store["results"], sys.executable)
    assert outcome.ok, (outcome.message, outcome.log)
    bundle = load_bundle(store["results"] / outcome.job_id)
    stored = f"nsight/{upload.name}"
    assert (bundle.path / stored).read_bytes() == upload.read_bytes()
    with zipfile.ZipFile(zip_bundle(bundle)) as archive:
        assert archive.read(f"{outcome.job_id}/{stored}") == upload.read_bytes()
    assert download_name(bundle, stored) == f"original-upload_{upload.name}"
    assert download_name(bundle, "tables/runs.csv") == "tables_runs.csv"
    with table_csv_file(bundle.path, "tables/runs.csv") as made:
        runs_csv = made.read().decode("utf-8")  # made on download (issue 40)
    assert f"'{formula}".replace('"', '""') in runs_csv

    at = app("files", query={"job": outcome.job_id})
    assert not at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels.count("Download original") == 1
    assert ORIGINALS_NOTE in texts(at) and "original upload" in texts(at)


def test_rule_results_of_an_imported_details_export_are_listed(store, app) -> None:
    """Issue 20 case 08: the details page's rule rows reach the Files page, attributed to the
    CSV (no .ncu-rep was read)."""
    from profiling_worker.importing import import_nsight_output

    details = (Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "import_cases"
               / "08-details-rule-columns" / "ranges_details_base.csv")
    import_nsight_output([details], store["results"], "details-rules")
    at = app("files", query={"job": "details-rules"})
    assert not at.exception, at.exception
    assert "written by the importer from the rule rows of `ranges_details_base.csv`" in texts(at)
    rules = next(df.value for df in at.dataframe if "rule_identifier" in df.value.columns)
    assert len(rules) == 33 and "TheoreticalOccupancy" in set(rules["rule_identifier"])


def test_a_report_left_out_shows_its_reason_where_it_would_be(store, monkeypatch, app) -> None:
    """Issue 25: a bundled job whose .ncu-rep was left out (too large) showed no report and no
    reason on the Files page; the reason was only in manifest.json."""

    monkeypatch.setenv("KPROF_BUNDLED_DIR",
                       str(SCENARIOS))
    at = app("files", query={"job": "h200-ncu-gate-base"})
    assert not at.exception
    text = texts(at)
    assert ("`nsight/ncu-output-profiled-0.ncu-rep`: not in this bundle, left out (too large for "
            "the repository); its per-launch table is kept") in text
    assert "size not recorded" in text  # bundled before scripts/bundle_recorded.py kept sizes


def test_bundle_script_keeps_the_size_of_a_report_it_leaves_out(store, cpu_bundle_src, app,
                                                                 tmp_path) -> None:
    """scripts/bundle_recorded.py on a bundle holding a real .ncu-rep: the Files page shows
    the report's size in bytes where it would be."""
    import gzip
    import json
    import shutil
    import sys

    repo = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(repo / "scripts"))
    from bundle_recorded import bundle_one

    src = tmp_path / "h200-ncu-left-out"
    shutil.copytree(cpu_bundle_src, src)
    rep = src / "nsight" / "ncu-output-profiled-0.ncu-rep"
    rep.parent.mkdir(exist_ok=True)
    with gzip.open(scenario_report("h200-ncu-j1-fp16")) as f:
        rep.write_bytes(f.read())
    manifest = json.loads((src / "manifest.json").read_text())
    manifest["files"] = [*manifest["files"], "nsight/ncu-output-profiled-0.ncu-rep"]
    (src / "manifest.json").write_text(json.dumps(manifest))
    bundle_one(src, store["bundled"], None, "/nowhere")
    at = app("files", query={"job": "h200-ncu-left-out"})
    assert not at.exception
    text = texts(at)
    assert "`nsight/ncu-output-profiled-0.ncu-rep`: not in this bundle, left out" in text
    assert numbers.fmt_bytes(rep.stat().st_size) in text  # "3.1 MB", not "3,140,000 bytes"
    assert f"{rep.stat().st_size:,} bytes" not in text


def test_without_the_route_no_csv_is_made_until_its_click(seeded, app, monkeypatch) -> None:
    """A bare ``streamlit run`` holds a download in memory and makes it on click, where a
    failure shows only Streamlit's "Failed to generate file": a CSV whose Parquet file is
    damaged is refused before the click, the file named with the fix, from the Parquet footer
    alone. No CSV is made at the page's load (each was made to learn its size); one made on
    click over the limit is refused then, named with the folder to copy from."""
    from functools import partial

    import pytest

    from app.core import bundle_files
    from app.streamlit_patches import download_route
    from profiling_worker.bundle.writer import table_csv

    monkeypatch.setitem(download_route._state, "serving", False)
    made: list[str] = []
    write = bundle_files.write_table_csv
    monkeypatch.setattr(bundle_files, "write_table_csv",
                        lambda where, name, out: made.append(name) or write(where, name, out))
    bundle = seeded["results"] / JOB
    (bundle / "tables" / "runs.parquet").write_bytes(b"not parquet")
    files = sum(p.stat().st_size for p in bundle.rglob("*") if p.is_file())
    at = app("files")
    assert not at.exception
    assert made == []
    said = [unescape(c.value) for c in at.caption
            if "tables/runs.csv: not made" in unescape(c.value)]
    assert len(said) == 1 and bundle_files.UNMADE_FIX in said[0], texts(at)
    assert "tables/runs.parquet cannot be read" in said[0] and str(bundle) not in said[0]
    labels = [b.proto.label for b in at.get("download_button")]
    assert f"{numbers.fmt_bytes(files)} before compression, and " in labels[0]
    assert labels.count("Download") == len(list((bundle / "tables").iterdir())) - 1 + len(
        [p for p in bundle.rglob("*") if p.is_file() and p.stat().st_size])
    big = max((p for p in (bundle / "tables").iterdir() if p.stem != "runs"),
              key=lambda p: len(table_csv(bundle, p.stem) or b""))
    relpath = f"tables/{big.stem}.csv"
    with pytest.raises(bundle_files.DownloadTooLarge, match=f"^{relpath} is .* copy it from"):
        bundle_files.checked_download(partial(bundle_files.table_csv_file, bundle, relpath),
                                      relpath, str(bundle), len(table_csv(bundle, big.stem)) - 1)
