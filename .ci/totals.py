"""One closing line for a CI run: the tests every runner reported, added up.

Reads the JUnit XML reports of the pytest passes (``.pytest-reports``) and of Maven Surefire
(``plugin-java/*/target/surefire-reports``) and prints ``total: N passed, N failed, N skipped``,
the plain line CI reads, with a line per report folder before it.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def counts(report: Path) -> tuple[int, int, int]:
    """(passed, failed, skipped) of one JUnit XML file; an unreadable file counts one failure."""
    try:
        root = ET.parse(report).getroot()
    except (ET.ParseError, OSError):
        return 0, 1, 0
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    tests = failed = skipped = 0
    for suite in suites:
        tests += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped += int(suite.get("skipped", 0))
    return tests - failed - skipped, failed, skipped


def main(root: Path) -> None:
    groups = {
        "pytest": sorted((root / ".pytest-reports").glob("*.xml")),
        "JUnit (Maven Surefire)": sorted(root.glob("plugin-java/*/target/surefire-reports/*.xml")),
    }
    total = [0, 0, 0]
    for name, reports in groups.items():
        group = [0, 0, 0]
        for report in reports:
            for i, n in enumerate(counts(report)):
                group[i] += n
        print(f"  {name}: {group[0]} passed, {group[1]} failed, {group[2]} skipped")
        total = [a + b for a, b in zip(total, group, strict=True)]
    print(f"total: {total[0]} passed, {total[1]} failed, {total[2]} skipped")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd())
