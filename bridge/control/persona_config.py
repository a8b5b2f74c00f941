"""``config.yml``'s ``persona`` section: the soul each lane type speaks as by default.

``public`` is the public session's, ``private`` every private conversation's; each names a
soul of ``workspace/souls/`` (`bridge.control.souls_files`) or is null for none. A name no
soul file defines is a problem of that field, so a folder that names a missing soul is refused
whole like any other mistake.
"""

from __future__ import annotations

from pydantic import Field

from bridge.control.base import StrictModel
from bridge.control.souls_files import SOUL_NAME


class PersonaConfig(StrictModel):
    public: str | None = Field(default=None, pattern=SOUL_NAME)
    private: str | None = Field(default=None, pattern=SOUL_NAME)
