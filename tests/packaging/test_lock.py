"""The lock pyjms downloads by is what Maven resolves (issue 35, item 1): Maven resolves each
provider's profile of java/pom.xml, and the lock it writes is, byte for byte, the committed
pyjms/bridge/jars.lock.json that ships in the wheel. A pom changed without `make lock` fails
here. Runs Maven four times (one profile each): about a minute with a warm ~/.m2, two or three
under load; a clean ~/.m2 downloads the jars once."""

from __future__ import annotations

import pytest

from pyjms.bridge import classpath, jarlock, maven

pytestmark = pytest.mark.slow


def test_the_committed_lock_is_what_maven_resolves_from_the_pom():
    resolved = maven.lock_text(classpath.SOURCE_POM, progress=lambda _: None)
    assert resolved == jarlock.LOCK_FILE.read_text(), (
        "pyjms/bridge/jars.lock.json is not what Maven resolves from java/pom.xml: run 'make lock'"
    )
    lock = jarlock.read(jarlock.LOCK_FILE)
    assert set(lock.providers) == set(maven.PROVIDERS) and lock.pom_sha256 == maven.pom_sha256(
        classpath.SOURCE_POM
    )
