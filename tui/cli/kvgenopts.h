/* kvgenopts.h - the seeded generator's options (calc/kvgen.h), one
 * OptSpec each, as every command that generates a head (kvlab quant, kvlab
 * niah) takes them: written once, so that their names and help agree. */
#ifndef KVLAB_KVGENOPTS_H
#define KVLAB_KVGENOPTS_H

#include "cli.h"
#include "kvgen.h"

#define KVGEN_OPT_OUTLIER_CHANNELS \
    {"outlier-channels", "N", "key channels with outliers" CLI_DEFAULT(KVGEN_OUTLIER_CHANNELS_DEFAULT)}
#define KVGEN_OPT_OUTLIER_SCALE \
    {"outlier-scale", "X", "their magnitude over ordinary keys" CLI_DEFAULT(KVGEN_OUTLIER_SCALE_DEFAULT)}
#define KVGEN_OPT_QUERY_OUTLIER_WEIGHT \
    {"query-outlier-weight", "X", "query weight on outlier channels" CLI_DEFAULT(KVGEN_QUERY_OUTLIER_WEIGHT_DEFAULT)}
#define KVGEN_OPT_SINKS {"sinks", "N", "attention-sink tokens at the start" CLI_DEFAULT(KVGEN_SINKS_DEFAULT)}
#define KVGEN_OPT_SINK_STRENGTH \
    {"sink-strength", "X", "logits a sink stands above other tokens" CLI_DEFAULT(KVGEN_SINK_STRENGTH_DEFAULT)}
#define KVGEN_OPT_VALUE_OUTLIERS \
    {"value-outliers", "N", "tokens with large values" CLI_DEFAULT(KVGEN_VALUE_OUTLIERS_DEFAULT)}
#define KVGEN_OPT_VALUE_OUTLIER_SCALE \
    {"value-outlier-scale", "X", "their value norm over others" CLI_DEFAULT(KVGEN_VALUE_OUTLIER_SCALE_DEFAULT)}

#endif
