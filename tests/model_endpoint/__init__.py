"""Tests of harness_testkit.model_endpoint."""
