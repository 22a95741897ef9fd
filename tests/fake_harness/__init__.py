"""Tests of harness_testkit.fake_harness."""
