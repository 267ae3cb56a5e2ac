#ifndef CAPPLAN_SERVICE_CLI_INGEST_H_
#define CAPPLAN_SERVICE_CLI_INGEST_H_

#include "service/cli/context.h"

namespace capplan::service {

// `capplan ingest FILE... --id ID [deployment flags | --launch LINE]
//  [--source URL --measured-by WHO --date D] (--out-dir DIR | --server H:P
//  --token-file F) [--replace]`: benchmark outputs and start-up logs of one
// configuration become one baseline, written atomically into DIR/baselines/
// or sent to a server's PutBaseline.
//
// --max-concurrency N, --request-rate R|inf, --num-prompts N state the load
// for every file given, for files that print none (the user read it from the
// benchmark command); each row note says "stated by the user", and a file
// that states a different value is refused (ApplyStatedLoad).
// --model-config FILE writes the model entry too: --model-id (default: from
// --model-hf-id or config.json's _name_or_path), --model-hf-id,
// --model-display-name and --model-family override what config.json names,
// --model-source cites it.
CliCommandSpec IngestCommandSpec();

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_INGEST_H_
