"""The runtime backend (``axpipe runtime start``): a loop of periodic duties over the
project store — heartbeat, requests, the schedule sweep, dispatch of queued runs to
launcher processes, and recovery of work left by processes that died."""
