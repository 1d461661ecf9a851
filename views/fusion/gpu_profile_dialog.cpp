#include "views/fusion/gpu_profile_dialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace tessera::views {
namespace {

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QSpinBox* makeBox(QWidget* parent, int lo, int hi, int value, const QString& suffix)
{
    auto* b = new QSpinBox(parent);
    b->setRange(lo, hi);
    b->setValue(value);
    b->setSuffix(suffix);
    b->setAccelerated(true);
    return b;
}

int kib(std::int64_t bytes) { return static_cast<int>(bytes / 1024); }

}  // namespace

GpuProfileDialog::GpuProfileDialog(const target::GpuProfile& base, QWidget* parent) : QDialog(parent), m_base(base)
{
    setWindowTitle(tr("What-if Hardware"));
    setObjectName(QStringLiteral("gpuProfileDialog"));
    auto* lay = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("A copy of %1 for planning. The planners read SMs, L1, shared memory and warp "
                                "size (FusePlanner's hardware inputs); L2 is kept for reference.")
                                 .arg(fromStd(base.displayName.empty() ? base.name : base.displayName)),
                             this);
    intro->setWordWrap(true);
    lay->addWidget(intro);
    auto* form = new QFormLayout;
    const std::string baseName = base.name.size() > 7 && base.name.substr(base.name.size() - 7) == "-custom"
                                     ? base.name
                                     : base.name + "-custom";
    m_name = new QLineEdit(fromStd(baseName), this);
    m_name->setObjectName(QStringLiteral("profileName"));
    m_sms = makeBox(this, 1, 4096, base.sms, QString());
    m_l1 = makeBox(this, 1, 1 << 20, kib(base.l1Bytes), tr(" KiB"));
    m_shared = makeBox(this, 1, 1 << 20, kib(base.sharedBytes), tr(" KiB"));
    m_warp = makeBox(this, 1, 1024, base.warpSize, QString());
    m_l2 = makeBox(this, 0, 1 << 22, kib(base.l2Bytes), tr(" KiB"));
    form->addRow(tr("Name"), m_name);
    form->addRow(tr("SMs"), m_sms);
    form->addRow(tr("L1 per SM"), m_l1);
    form->addRow(tr("Shared memory per block"), m_shared);
    form->addRow(tr("Warp size"), m_warp);
    form->addRow(tr("L2"), m_l2);
    lay->addLayout(form);
    m_error = new QLabel(this);
    m_error->setStyleSheet(QStringLiteral("color: #c62828;"));
    m_error->setWordWrap(true);
    lay->addWidget(m_error);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    lay->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    for (QSpinBox* b : {m_sms, m_l1, m_shared, m_warp, m_l2})
        connect(b, &QSpinBox::valueChanged, this, &GpuProfileDialog::validate);
    connect(m_name, &QLineEdit::textChanged, this, &GpuProfileDialog::validate);
    validate();
}

target::GpuProfile GpuProfileDialog::profile() const
{
    target::GpuProfile p = m_base;
    p.name = m_name->text().trimmed().toStdString();
    p.sms = m_sms->value();
    p.l1Bytes = static_cast<std::int64_t>(m_l1->value()) * 1024;
    p.sharedBytes = static_cast<std::int64_t>(m_shared->value()) * 1024;
    p.warpSize = m_warp->value();
    p.l2Bytes = static_cast<std::int64_t>(m_l2->value()) * 1024;
    const bool same = p.sms == m_base.sms && p.l1Bytes == m_base.l1Bytes && p.sharedBytes == m_base.sharedBytes &&
                      p.warpSize == m_base.warpSize && p.l2Bytes == m_base.l2Bytes;
    if (!same) {
        p.displayName = "what-if copy of " + (m_base.displayName.empty() ? m_base.name : m_base.displayName);
        p.source = "edited in the fusion-plan panel from " + m_base.name;
    }
    return p;
}

void GpuProfileDialog::validate()
{
    QString why;
    if (m_name->text().trimmed().isEmpty())
        why = tr("The profile needs a name");
    else
        why = fromStd(target::validateGpuProfile(profile()));
    m_error->setText(why);
    m_error->setVisible(!why.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(why.isEmpty());
}

}  // namespace tessera::views
