#pragma once
/// @file
/// A small C++ syntax highlighter for generated code: keywords, types, numbers, string and char
/// literals, preprocessor lines (#pragma omp, #include) and // and /* */ comments (block comments
/// may span lines). It is a lexical colouring only, good enough for the code generator's output.
/// The CUDA dialect adds CUDA C's qualifiers and intrinsics (__global__, __device__, __shared__,
/// __syncthreads, __restrict__, ...) as keywords and its built-in variables and vector types
/// (threadIdx, blockIdx, blockDim, gridDim, warpSize, dim3) as types.
///
/// Thread rules: UI thread only (it belongs to a QTextDocument).

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <vector>

namespace tessera::views {

class CppHighlighter : public QSyntaxHighlighter {
    Q_OBJECT
public:
    /// Kinds of token the highlighter colours.
    enum class Kind { Plain, Keyword, Type, Number, String, Preprocessor, Comment };
    /// Which language's words are coloured.
    enum class Dialect { Cpp, Cuda };

    explicit CppHighlighter(QTextDocument* document, Dialect dialect = Dialect::Cpp);

    Dialect dialect() const { return m_dialect; }

    /// The format used for a kind (Plain: default format).
    QTextCharFormat format(Kind kind) const;

protected:
    void highlightBlock(const QString& text) override;

private:
    struct Rule {
        QRegularExpression pattern;
        Kind kind;
    };
    Dialect m_dialect;
    std::vector<Rule> m_rules;
    QTextCharFormat m_formats[7];
};

}  // namespace tessera::views
