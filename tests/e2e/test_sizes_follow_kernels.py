"""The size field in a real browser: the README's own kernel, picked in place of matmul, shows
its declared sizes at once (a fresh user's find: matmul's stayed, and the job timed them)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (REPO_ROOT, AppServer, _require_app, _serve, get_by_key,
                                open_app, wait_for_app_run, wait_for_elements)
from tests.unit.test_readme import README_KERNELS, readme_file

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def readme_kernels_server(request: pytest.FixtureRequest,
                          tmp_path_factory: pytest.TempPathFactory,
                          artifacts_dir: Path) -> Iterator[AppServer]:
    """The dashboard started with the README's kernel folder (``--kernels my_kernels``) and
    a kernel of two parameters (rows, cols: as the bundled softmax_rows)."""
    _require_app()
    base = tmp_path_factory.mktemp("dashboard")
    folder = base / "my_kernels"
    folder.mkdir()
    (folder / "scale.py").write_text(readme_file(README_KERNELS))
    (folder / "two_params.py").write_text(
        (REPO_ROOT / "tests" / "fixtures" / "kernel_files" / "two_params.py").read_text())
    bundled = base / "bundled"
    bundled.mkdir()
    yield from _serve(request, base, artifacts_dir, bundled, kernel_dirs=folder)


def _swap(page, old: str, new: str) -> None:  # type: ignore[no-untyped-def]
    """In Kernels, remove ``old`` (the app runs: no kernel picked), then pick ``new``."""
    kernels = get_by_key(page, "builder-kernels")
    kernels.locator("[data-tag]").filter(has_text=old).get_by_role("button").click()
    wait_for_app_run(page)
    box = kernels.get_by_role("combobox")
    box.click()
    box.press_sequentially(new)
    page.get_by_role("option").filter(has_text=f"{new} ·").first.click()
    page.keyboard.press("Escape")
    wait_for_app_run(page)
    expect(kernels.locator("[data-tag]").filter(has_text=new)).to_have_count(1)
    expect(page.get_by_test_id("stMultiSelectDropdown")).to_have_count(0)  # faded out


def _value(page, key: str):  # type: ignore[no-untyped-def]
    return get_by_key(page, key).locator("input").first


def test_kernels_picked_in_turn_show_their_own_sizes(  # type: ignore[no-untyped-def]
        page, readme_kernels_server: AppServer, artifacts_dir) -> None:
    open_app(page, readme_kernels_server.url)
    wait_for_elements(page)
    expect(_value(page, "builder-sizes")).to_have_value("64, 128, 256")
    _swap(page, "matmul", "my_scale")  # as the user did: Kernels cleared, their own picked
    expect(_value(page, "builder-sizes")).to_have_value("65536, 1048576")
    page.screenshot(path=str(artifacts_dir / "sizes-follow-kernels.png"), full_page=True)
    _swap(page, "my_scale", "softmax_rows")  # two parameters, each its own field
    expect(_value(page, "builder-param-rows")).to_have_value("64, 512")
    expect(_value(page, "builder-param-cols")).to_have_value("512, 64")
    _swap(page, "softmax_rows", "user_fill2d")  # the same fields, now written by the app
    expect(_value(page, "builder-param-rows")).to_have_value("8")
    expect(_value(page, "builder-param-cols")).to_have_value("32, 64")
    combine = get_by_key(page, "builder-combine").get_by_role("radio")
    expect(combine.first).to_be_checked()  # product, user_fill2d's (softmax_rows' is zip)
    page.screenshot(path=str(artifacts_dir / "sizes-follow-kernels-2.png"), full_page=True)
