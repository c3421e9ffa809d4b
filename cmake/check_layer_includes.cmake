# Fails when a file of layer LAYER includes a header from a FORBID folder (a higher layer).
# Run by oxidize_layer() (CMakeLists.txt) before the layer compiles.
foreach(f ${FILES})
  file(STRINGS ${f} includes REGEX "^#include \"")
  foreach(line ${includes})
    foreach(dir ${FORBID})
      if(line MATCHES "^#include \"${dir}/")
        message(FATAL_ERROR "${f}: ${line}: layer ${LAYER} must not include ${dir}/ (dependencies point one way)")
      endif()
    endforeach()
  endforeach()
endforeach()
file(TOUCH ${STAMP})
