"""Small helpers with no simulation in them: reading untrusted input, rate-limited logging."""
