"""Quantiles of many groups or many columns at once: :func:`.grouped.grouped_quantiles`, :func:`.describe.describe`."""
