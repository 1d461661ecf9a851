#include "core/lower/lower_templates.h"

namespace tessera::lower::detail {

void registerElementwiseTemplates(TemplateTable& /*table*/) {}

}  // namespace tessera::lower::detail
