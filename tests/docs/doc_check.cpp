// readyport-doc-check: the documentation cannot drift from the code (ctest label "docs").
//
//   readyport-doc-check --root DIR [--stress BINARY] [--plant WHAT]
//
// 1. Every block of source lines marked in a file under core/, fakes/, stress/, properties/,
//    examples/ or tests/ (a program or a test that ctest compiles and runs)
//        // doc-snippet: <document> <name> begin
//        ...
//        // doc-snippet: <name> end
//    is, its common indentation removed, exactly one fenced code block of that document.
// 2. Every C++ block (```cpp) of README.md, docs/*.md and stress/corpus/README.md is such a marked
//    block, or says why it is not compiled on the line before it: <!-- fragment: <why> -->.
// 3. With --stress: every option of readyport-stress that a document shows with the command (in a
//    code block line or a code span that names readyport-stress) is one its --help lists.
// --plant unmarked-block | changed-snippet | unknown-option plants one break in what was read:
// the check must then fail (the docs.*_catches_* tests), or it could not fail at all.
//
// Prints one line per problem ("README.md:12: ...") and a summary; exit 0 when there is none, 1
// when there is, 2 on a bad command line or an unreadable file.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Snippet {
  std::string doc;  // the document, relative to the root: "README.md"
  std::string name;
  std::string source;  // where it is marked, relative to the root
  int line = 0;
  std::string text;  // its lines, indentation removed, each ending in '\n'
};

struct Block {
  int line = 0;        // of the opening fence
  std::string info;    // "cpp", "sh", ""
  std::string before;  // the last non-blank line before the fence
  std::string text;    // its lines, each ending in '\n'
};

struct Doc {
  std::string path;  // relative to the root
  std::vector<std::string> lines;
  std::vector<Block> blocks;
};

bool read_lines(const fs::path& path, std::vector<std::string>* lines) {
  std::ifstream in(path);
  if (!in) {
    return false;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    lines->push_back(line);
  }
  return true;
}

std::size_t indent_of(const std::string& line) {
  const std::size_t first = line.find_first_not_of(' ');
  return first == std::string::npos ? line.size() : first;
}

// The marked snippets of one source file; problems go to `problems`.
void collect_snippets(const fs::path& root, const fs::path& file, std::vector<Snippet>* snippets,
                      std::vector<std::string>* problems) {
  static const std::regex begin_re(R"(^\s*// doc-snippet: (\S+) (\S+) begin\s*$)");
  static const std::regex end_re(R"(^\s*// doc-snippet: (\S+) end\s*$)");
  std::vector<std::string> lines;
  if (!read_lines(file, &lines)) {
    return;
  }
  const std::string relative = fs::relative(file, root).generic_string();
  Snippet* open = nullptr;
  std::vector<std::string> body;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch match;
    if (std::regex_search(lines[i], match, begin_re)) {
      if (open != nullptr) {
        problems->push_back(relative + ":" + std::to_string(i + 1) + ": snippet '" + open->name +
                            "' not ended before another begins");
      }
      snippets->push_back(Snippet{match[1], match[2], relative, static_cast<int>(i + 1), ""});
      open = &snippets->back();
      body.clear();
      continue;
    }
    if (std::regex_search(lines[i], match, end_re)) {
      if (open == nullptr || match[1] != open->name) {
        problems->push_back(relative + ":" + std::to_string(i + 1) + ": end of snippet '" +
                            std::string(match[1]) + "' that was not begun");
        continue;
      }
      std::size_t indent = std::string::npos;
      for (const std::string& line : body) {
        if (line.find_first_not_of(' ') != std::string::npos) {
          indent = std::min(indent, indent_of(line));
        }
      }
      for (const std::string& line : body) {
        open->text += (line.size() >= indent ? line.substr(indent) : std::string()) + "\n";
      }
      open = nullptr;
      continue;
    }
    if (open != nullptr) {
      body.push_back(lines[i]);
    }
  }
  if (open != nullptr) {
    problems->push_back(relative + ":" + std::to_string(open->line) + ": snippet '" + open->name +
                        "' never ends");
    snippets->pop_back();
  }
}

Doc parse_doc(const std::string& relative, std::vector<std::string> lines) {
  Doc doc{relative, std::move(lines), {}};
  std::string before;
  for (std::size_t i = 0; i < doc.lines.size(); ++i) {
    const std::string& line = doc.lines[i];
    if (line.rfind("```", 0) != 0) {
      if (line.find_first_not_of(' ') != std::string::npos) {
        before = line;
      }
      continue;
    }
    Block block{static_cast<int>(i + 1), line.substr(3), before, ""};
    std::size_t j = i + 1;
    while (j < doc.lines.size() && doc.lines[j].rfind("```", 0) != 0) {
      block.text += doc.lines[j++] + "\n";
    }
    doc.blocks.push_back(block);
    i = j;
    before.clear();
  }
  return doc;
}

// The options `--x` that follow "readyport-stress" in `text` (a code span or a block's line).
std::vector<std::string> stress_options_in(const std::string& text) {
  static const std::regex option_re(R"((^|[\s\[])(--[a-z][a-z0-9-]*))");
  std::vector<std::string> options;
  const std::size_t at = text.find("readyport-stress");
  if (at == std::string::npos) {
    return options;
  }
  const std::string rest = text.substr(at);
  for (auto it = std::sregex_iterator(rest.begin(), rest.end(), option_re);
       it != std::sregex_iterator(); ++it) {
    options.push_back((*it)[2]);
  }
  return options;
}

// The options `--help` of `binary` lists.
bool help_options(const std::string& binary, std::set<std::string>* options) {
#ifdef _WIN32
  std::FILE* pipe = _popen((binary + " --help").c_str(), "r");
#else
  std::FILE* pipe = popen((binary + " --help").c_str(), "r");
#endif
  if (pipe == nullptr) {
    return false;
  }
  std::string help;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) {
    help += buffer;
  }
#ifdef _WIN32
  const int status = _pclose(pipe);
#else
  const int status = pclose(pipe);
#endif
  static const std::regex option_re(R"(--[a-z][a-z0-9-]*)");
  for (auto it = std::sregex_iterator(help.begin(), help.end(), option_re);
       it != std::sregex_iterator(); ++it) {
    options->insert(it->str());
  }
  return status == 0 && !options->empty();
}

int usage(const char* message) {
  std::fprintf(stderr,
               "readyport-doc-check: %s\n"
               "usage: readyport-doc-check --root DIR [--stress BINARY] "
               "[--plant unmarked-block|changed-snippet|unknown-option]\n",
               message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string root_text;
  std::string stress;
  std::string plant;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) {
      return usage(("'" + arg + "' needs a value").c_str());
    }
    if (arg == "--root") {
      root_text = argv[++i];
    } else if (arg == "--stress") {
      stress = argv[++i];
    } else if (arg == "--plant") {
      plant = argv[++i];
    } else {
      return usage(("unknown argument '" + arg + "'").c_str());
    }
  }
  if (root_text.empty()) {
    return usage("--root is required");
  }
  if (!plant.empty() && plant != "unmarked-block" && plant != "changed-snippet" &&
      plant != "unknown-option") {
    return usage(("unknown --plant '" + plant + "'").c_str());
  }
  const fs::path root(root_text);
  std::vector<std::string> problems;

  // The documents.
  std::vector<std::string> doc_paths = {"README.md", "stress/corpus/README.md"};
  std::vector<std::string> docs_dir;
  for (const auto& entry : fs::directory_iterator(root / "docs")) {
    if (entry.path().extension() == ".md") {
      docs_dir.push_back("docs/" + entry.path().filename().string());
    }
  }
  std::sort(docs_dir.begin(), docs_dir.end());
  doc_paths.insert(doc_paths.end(), docs_dir.begin(), docs_dir.end());
  std::map<std::string, Doc> docs;
  for (const std::string& path : doc_paths) {
    std::vector<std::string> lines;
    if (!read_lines(root / path, &lines)) {
      std::fprintf(stderr, "readyport-doc-check: cannot read %s\n", path.c_str());
      return 2;
    }
    if (path == "README.md" && plant == "unmarked-block") {
      for (const char* line : {"", "```cpp", "int planted_and_never_compiled();", "```"}) {
        lines.push_back(line);
      }
    }
    if (path == "README.md" && plant == "unknown-option") {
      lines.push_back("");
      lines.push_back("`readyport-stress --no-such-option-planted`");
    }
    docs.emplace(path, parse_doc(path, std::move(lines)));
  }

  // The snippets, in a sorted walk of the source folders.
  std::vector<fs::path> sources;
  for (const char* folder : {"core", "fakes", "stress", "properties", "examples", "tests"}) {
    if (!fs::exists(root / folder)) {
      continue;
    }
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      const std::string extension = entry.path().extension().string();
      if (entry.is_regular_file() && (extension == ".cpp" || extension == ".hpp")) {
        sources.push_back(entry.path());
      }
    }
  }
  std::sort(sources.begin(), sources.end());
  std::vector<Snippet> snippets;
  for (const fs::path& source : sources) {
    collect_snippets(root, source, &snippets, &problems);
  }
  if (plant == "changed-snippet" && !snippets.empty()) {
    snippets.front().text += "// a line the document does not have\n";
  }

  // 1. Each snippet is a block of its document.
  std::set<std::pair<std::string, int>> compiled;  // (document, block line)
  for (const Snippet& snippet : snippets) {
    const auto doc = docs.find(snippet.doc);
    if (doc == docs.end()) {
      problems.push_back(snippet.source + ":" + std::to_string(snippet.line) + ": snippet '" +
                         snippet.name + "' names " + snippet.doc + ", not a checked document");
      continue;
    }
    bool found = false;
    for (const Block& block : doc->second.blocks) {
      if (block.text != snippet.text) {
        continue;
      }
      found = true;
      compiled.insert({snippet.doc, block.line});
    }
    if (!found) {
      problems.push_back(snippet.source + ":" + std::to_string(snippet.line) + ": snippet '" +
                         snippet.name + "' is not a code block of " + snippet.doc +
                         " as written (the document and the code differ)");
    }
  }

  // 2. Each C++ block is compiled, or says why not.
  std::size_t cpp_blocks = 0;
  std::size_t fragments = 0;
  for (const auto& [path, doc] : docs) {
    for (const Block& block : doc.blocks) {
      if (block.info != "cpp" && block.info != "c++") {
        continue;
      }
      ++cpp_blocks;
      if (compiled.count({path, block.line}) != 0) {
        continue;
      }
      if (block.before.rfind("<!-- fragment: ", 0) == 0) {
        ++fragments;
        continue;
      }
      problems.push_back(path + ":" + std::to_string(block.line) +
                         ": a C++ block that no program or test compiles (mark it in one with "
                         "// doc-snippet, or say why not: <!-- fragment: why -->)");
    }
  }

  // 3. The options shown with readyport-stress are its options.
  std::size_t options_checked = 0;
  if (!stress.empty()) {
    std::set<std::string> known;
    if (!help_options(stress, &known)) {
      std::fprintf(stderr, "readyport-doc-check: '%s --help' failed\n", stress.c_str());
      return 2;
    }
    for (const auto& [path, doc] : docs) {
      bool in_block = false;
      for (std::size_t i = 0; i < doc.lines.size(); ++i) {
        const std::string& line = doc.lines[i];
        if (line.rfind("```", 0) == 0) {
          in_block = !in_block;
          continue;
        }
        std::vector<std::string> texts;
        if (in_block) {
          texts.push_back(line);
        } else {
          // The code spans of the line: between pairs of backticks.
          std::size_t start = line.find('`');
          while (start != std::string::npos) {
            const std::size_t end = line.find('`', start + 1);
            if (end == std::string::npos) {
              break;
            }
            texts.push_back(line.substr(start + 1, end - start - 1));
            start = line.find('`', end + 1);
          }
        }
        for (const std::string& text : texts) {
          for (const std::string& option : stress_options_in(text)) {
            ++options_checked;
            if (known.count(option) == 0) {
              problems.push_back(path + ":" + std::to_string(i + 1) + ": readyport-stress " +
                                 option + " is not an option its --help lists");
            }
          }
        }
      }
    }
  }

  for (const std::string& problem : problems) {
    std::printf("%s\n", problem.c_str());
  }
  std::printf(
      "doc check: %zu snippet(s), each a block of its document; %zu C++ block(s): %zu compiled, "
      "%zu fragment(s) saying why not; %zu readyport-stress option(s) named%s; %zu problem(s)\n",
      snippets.size(), cpp_blocks, compiled.size(), fragments, options_checked,
      stress.empty() ? " (not checked: no --stress)" : ", each in its --help", problems.size());
  return problems.empty() ? 0 : 1;
}
