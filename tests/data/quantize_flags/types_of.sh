#!/usr/bin/env bash
# `name type` for each tensor line of a llama-quantize (or `oxidize quantize`) --dry-run log on
# stdin: the target type where the line converts, the tensor's own type otherwise; lower-cased and
# sorted by name (llama-quantize visits tensors in its own order, layer by layer; oxidize in file order).
sed -nE 's/^\[ *[0-9]+\/ *[0-9]+\] +([^ ]+) +- .*type = +[A-Za-z0-9_]+, size = .*\(([A-Za-z0-9_]+)\)$/\1 \2/p; t
s/^\[ *[0-9]+\/ *[0-9]+\] +([^ ]+) +- .*type = +([A-Za-z0-9_]+), size = .*$/\1 \2/p' | tr 'A-Z' 'a-z' | LC_ALL=C sort
