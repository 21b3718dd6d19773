#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "diagnosis/diagnosis.h"
#include "exposition/export_context.h"

namespace trainscope {

// trainscope_diagnosis_active (1 per active diagnosis; the series is gone
// once it clears) and the pods' shaped bandwidth from their
// kubernetes.io/*-bandwidth annotations, which the cluster view needs to
// judge network_saturated from Prometheus.
void AppendDiagnosisFamilies(const ExportContext& ctx,
                             const std::vector<diagnosis::Diagnosis>& active,
                             std::vector<prometheus::MetricFamily>& out);

}  // namespace trainscope
