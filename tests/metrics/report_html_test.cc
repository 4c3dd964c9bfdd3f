#include "metrics/report_html.h"
