# parasim_warnings(target): the warning set every parasim target builds with.
add_library(parasim_warnings INTERFACE)
target_compile_options(parasim_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>)
if(PARASIM_WERROR)
  target_compile_options(parasim_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
