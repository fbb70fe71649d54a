# cmake -DGPUBENCH=<binary> -DOUT=<folder> -P generate-docs.cmake: the man pages (gzip -9n: no
# name or time stamp inside, so the package is reproducible) and the completion scripts, all
# written by the built binary from its own CLI definitions.
file(REMOVE_RECURSE "${OUT}/man")
execute_process(COMMAND "${GPUBENCH}" man "${OUT}/man" COMMAND_ERROR_IS_FATAL ANY)
file(GLOB pages "${OUT}/man/*.1")
foreach(page IN LISTS pages)
  execute_process(COMMAND gzip -9nf "${page}" COMMAND_ERROR_IS_FATAL ANY)
endforeach()
file(MAKE_DIRECTORY "${OUT}/completions")
foreach(pair IN ITEMS "bash=gpubench.bash" "zsh=_gpubench" "fish=gpubench.fish")
  string(REPLACE "=" ";" pair "${pair}")
  list(GET pair 0 shell)
  list(GET pair 1 name)
  execute_process(COMMAND "${GPUBENCH}" completions ${shell} OUTPUT_FILE "${OUT}/completions/${name}"
                  COMMAND_ERROR_IS_FATAL ANY)
endforeach()
