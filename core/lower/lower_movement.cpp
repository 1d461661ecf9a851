#include "core/lower/lower_templates.h"

namespace tessera::lower::detail {

void registerMovementTemplates(TemplateTable& /*table*/) {}

}  // namespace tessera::lower::detail
