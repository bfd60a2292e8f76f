"""Throughput benchmarks behind ``torchwm bench``: measured side by side in one run, never in tests."""
