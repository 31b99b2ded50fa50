"""``pyjms mark-service`` processes for the takeover test and bench."""

from __future__ import annotations

from tests.faults.processes import PyjmsProcess

#: a short lease: a new active service restores marks for one lease before it grants claims
MARK_LEASE_MS = 1500


class MarkServiceProcess(PyjmsProcess):
    """``pyjms mark-service`` in its own process; ``first`` is the first line it printed
    ("standing by", or that it is active)."""

    def __init__(self, url: str) -> None:
        super().__init__("mark-service", "--url", url, "--mark-lease", str(MARK_LEASE_MS))
        self.first = self.first_line(60)
