#pragma once

#include <string>

#include "report_page/model.h"

namespace trainscope::page {

// The per-rank table of a stalled job (training_stalled's evidence.ranks) as
// an HTML <table class="ranks">: one row per rank with its node, role,
// process state, CPU, how long it has been quiet, its rates and the peer it
// waits on; the suspect's row is class "suspect" and says so in words (not
// only by colour). Every value is escaped. Empty when there are no ranks.
std::string RankTable(const DiagnosisView& d);

}  // namespace trainscope::page
