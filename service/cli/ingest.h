#ifndef CAPPLAN_SERVICE_CLI_INGEST_H_
#define CAPPLAN_SERVICE_CLI_INGEST_H_

#include "service/cli/context.h"

namespace capplan::service {

// `capplan ingest FILE... --id ID [deployment flags | --launch LINE]
//  [--source URL --measured-by WHO --date D] (--out-dir DIR | --server H:P
//  --token-file F) [--replace]`: benchmark outputs and start-up logs of one
// configuration become one baseline, written atomically into DIR/baselines/
// or sent to a server's PutBaseline.
CliCommandSpec IngestCommandSpec();

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_INGEST_H_
