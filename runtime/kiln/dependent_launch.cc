#include "kiln/dependent_launch.h"

namespace kiln {
namespace {

thread_local int scopes = 0;

}  // namespace

ProgrammaticDependentLaunch::ProgrammaticDependentLaunch() { ++scopes; }

ProgrammaticDependentLaunch::~ProgrammaticDependentLaunch() { --scopes; }

bool ProgrammaticDependentLaunch::active() { return scopes > 0; }

}  // namespace kiln
