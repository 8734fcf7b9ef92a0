// C++ embedders include the public headers as they are.
#include <prism/prism.h>

int prism_consumer_cxx_version_ok()
{
    return prism_version()[0] != 0;
}
