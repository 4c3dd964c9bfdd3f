#include "metrics/openmetrics.h"
