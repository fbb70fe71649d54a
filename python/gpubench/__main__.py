"""`python -m gpubench ...` runs the executable like the console entry point."""

from gpubench import main

main()
