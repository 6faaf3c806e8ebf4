"""SVG snapshots of the main screens: seeded data, frozen clock, no feed, no cursor blink.

Update after an intended change with ``pytest tests/tui --snapshot-update``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from monque_tui.demo.screenshots import SCENE_SIZES, SCENE_URL, SCENES, SIZE, scene_app
from monque_tui.demo.seed import seed_store


@pytest.fixture
def scene_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    asyncio.run(seed_store(SCENE_URL))
    return tmp_path


@pytest.mark.parametrize("scene", list(SCENES))
def test_screen_snapshot(scene: str, scene_dir: Path, snap_compare: object) -> None:
    size = SCENE_SIZES.get(scene, SIZE)
    assert snap_compare(scene_app(), terminal_size=size, run_before=SCENES[scene])  # type: ignore[operator]
