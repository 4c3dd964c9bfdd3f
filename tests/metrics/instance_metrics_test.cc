#include "metrics/instance_metrics.h"
