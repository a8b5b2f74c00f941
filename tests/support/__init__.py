"""Test doubles shared by every suite (``from support.fake_link import FakeLink``)."""
