"""An instance id is printed raw in every worker log line and written on claimed jobs, so a
control character (an ESC) in it is refused, typed (found by the acceptance probe)."""

from __future__ import annotations

import pytest

from monque_engine import Monque
from monque_engine.options import InvalidOptionError


@pytest.mark.parametrize("instance_id", ["a\x1b[2Jb", "line\nbreak", "nul\x00", "c1\x9b"])
def test_instance_id_with_a_control_character_is_an_invalid_option(tmp_path: object, instance_id: str) -> None:
    with pytest.raises(InvalidOptionError, match="scheduler_instance_id must not contain control characters"):
        Monque(f"sqlite:///{tmp_path}/jobs.db", scheduler_instance_id=instance_id)


def test_instance_ids_as_people_write_them_still_pass(tmp_path: object) -> None:
    for instance_id in ("web-1:4242:ab12cd", "host 7", "wörker·1"):
        assert Monque(f"sqlite:///{tmp_path}/jobs.db", scheduler_instance_id=instance_id).instance_id == instance_id
