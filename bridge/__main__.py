"""`python -m bridge` is the same as the `mineclaw-bridge` console script."""

from bridge.cli import main

raise SystemExit(main())
