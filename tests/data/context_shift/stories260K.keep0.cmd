llama-completion -m stories260K.gguf -p 'Once upon a time' -n 700 -c 256 --temp 0 --context-shift --keep 0 -no-cnv -t 2
