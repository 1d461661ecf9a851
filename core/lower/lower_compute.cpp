#include "core/lower/lower_templates.h"

namespace tessera::lower::detail {

void registerComputeTemplates(TemplateTable& /*table*/) {}

}  // namespace tessera::lower::detail
