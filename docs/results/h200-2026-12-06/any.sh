#!/usr/bin/env bash
# On an H200: call A2 (the check reference). On another card: the AB call.
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
if [[ $name == *H200* ]]; then CAP=${CAP:-560} bash .deps/calls/callA2.sh; else bash .deps/calls/${H100_CALL:-h100-check.sh}; fi
