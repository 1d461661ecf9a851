// Temporary placeholder: the compute-heavy templates (H3b) replace this file with the real
// registrations.
#include "core/lower/lower_templates.h"

namespace tessera::lower::detail {

void registerHeavyTemplates(TemplateTable& /*table*/) {}

}  // namespace tessera::lower::detail
