// Scenario format, second edition: job kinds, chief/evaluator, programs;
// and what the pods of each kind get (layout, environment, Pod JSON).
#include <gtest/gtest.h>

#include <functional>

#include "layout.h"
#include "pod_env.h"
#include "pod_json.h"
#include "program_pod.h"
#include "scenario.h"

namespace trainsim {
namespace {

using nlohmann::json;

json Allreduce() {
  return json::parse(R"({
    "name": "ring", "duration_s": 30,
    "jobs": [{"name": "bert", "kind": "allreduce", "workers": 4,
              "gradient_bytes": 4000000, "step_ms": 200, "compute_ms": 20}]
  })");
}

json TfJob() {
  return json::parse(R"({
    "name": "tf2", "duration_s": 30,
    "jobs": [{"namespace": "ml", "name": "ctr", "kind": "ps_sync", "ps": 2,
              "workers": 2, "chief": 1, "evaluator": 1,
              "variables": [{"name": "embedding", "bytes": 1000}],
              "resources": {"worker": {"cpu_limit_cores": 0.5},
                            "chief": {"cpu_limit_cores": 0.25}}}]
  })");
}

json Program() {
  json d = TfJob();
  d["jobs"][0]["kind"] = "ps_async";
  d["jobs"][0].erase("variables");
  d["jobs"][0]["program"] = {
      {"argv",
       {"${PYTHON}", "${REPO}/bench/workloads/tf2_ps.py", "--x",
        "${ROLE}-${INDEX}"}},
      {"env", {{"TASK", "${POD_NAME}@${POD_IP}:${PORT}"}, {"PLAIN", "1"}}}};
  return d;
}

TEST(JobKindsTest, ParsesKindsCountsAndProgram) {
  Scenario a = ParseScenario(Allreduce());
  EXPECT_EQ(a.jobs[0].kind, JobKind::kAllreduce);
  EXPECT_EQ(a.jobs[0].ps, 0);  // allreduce defaults to no PS
  EXPECT_EQ(a.jobs[0].gradient_bytes, 4000000u);
  EXPECT_EQ(JobKindName(JobKind::kAllreduce), "allreduce");

  Scenario t = ParseScenario(TfJob());
  const Job& j = t.jobs[0];
  EXPECT_EQ(j.kind, JobKind::kPsSync);
  EXPECT_EQ(j.chief, 1);
  EXPECT_EQ(j.evaluator, 1);
  EXPECT_EQ(j.ResourcesFor(PodRole::kChief).cpu_limit_cores, 0.25);
  // The evaluator falls back to the workers' resources.
  EXPECT_EQ(j.ResourcesFor(PodRole::kEvaluator).cpu_limit_cores, 0.5);
  EXPECT_FALSE(j.program);

  Scenario p = ParseScenario(Program());
  ASSERT_TRUE(p.jobs[0].program);
  EXPECT_EQ(p.jobs[0].program->argv.size(), 4u);
  EXPECT_EQ(p.jobs[0].program->env.size(), 2u);

  Scenario d =
      ParseScenario(json::parse(R"({"name": "x", "jobs": [{"name": "j"}]})"));
  EXPECT_EQ(d.jobs[0].kind, JobKind::kPsAsync);
  EXPECT_EQ(d.jobs[0].chief, 0);
  EXPECT_EQ(d.jobs[0].evaluator, 0);
}

struct BadCase {
  std::string what;
  std::function<json()> doc;
  std::string message;
};

TEST(JobKindsTest, BadJobsNameFieldAndProblem) {
  auto with = [](json (*base)(), std::function<void(json&)> f) {
    return [=] {
      json d = base();
      f(d);
      return d;
    };
  };
  const std::vector<BadCase> cases = {
      {"unknown kind",
       with(TfJob, [](json& d) { d["jobs"][0]["kind"] = "mpi"; }),
       "jobs[0].kind: unknown job kind \"mpi\" (one of: ps_async, ps_sync, "
       "allreduce)"},
      {"allreduce without gradient",
       with(Allreduce, [](json& d) { d["jobs"][0].erase("gradient_bytes"); }),
       "jobs[0].gradient_bytes: is required for an allreduce job"},
      {"allreduce zero gradient",
       with(Allreduce, [](json& d) { d["jobs"][0]["gradient_bytes"] = 0; }),
       "jobs[0].gradient_bytes: must be >= 1"},
      {"allreduce with ps",
       with(Allreduce, [](json& d) { d["jobs"][0]["ps"] = 1; }),
       "jobs[0].ps: must be 0 for an allreduce job"},
      {"allreduce with evaluator",
       with(Allreduce, [](json& d) { d["jobs"][0]["evaluator"] = 1; }),
       "jobs[0].evaluator: must be 0 for an allreduce job"},
      {"allreduce of one",
       with(Allreduce, [](json& d) { d["jobs"][0]["workers"] = 1; }),
       "jobs[0].workers: an allreduce ring needs at least 2 ranks"},
      {"gradient on a PS job",
       with(TfJob, [](json& d) { d["jobs"][0]["gradient_bytes"] = 5; }),
       "jobs[0].gradient_bytes: only for allreduce jobs"},
      {"ps_sync without variables",
       with(TfJob, [](json& d) { d["jobs"][0].erase("variables"); }),
       "jobs[0].variables: a ps_sync job needs variables"},
      {"two chiefs", with(TfJob, [](json& d) { d["jobs"][0]["chief"] = 2; }),
       "jobs[0].chief: must be 0 or 1"},
      {"negative evaluator",
       with(TfJob, [](json& d) { d["jobs"][0]["evaluator"] = -1; }),
       "jobs[0].evaluator: must not be negative"},
      {"chief resources typo",
       with(TfJob,
            [](json& d) { d["jobs"][0]["resources"]["chief"]["cpu"] = 1; }),
       "jobs[0].resources.chief.cpu: unknown field"},
      {"program without argv",
       with(Program, [](json& d) { d["jobs"][0]["program"].erase("argv"); }),
       "jobs[0].program.argv: is required"},
      {"program empty argv",
       with(Program,
            [](json& d) { d["jobs"][0]["program"]["argv"] = json::array(); }),
       "jobs[0].program.argv: must be a non-empty array"},
      {"program argv not string",
       with(Program, [](json& d) { d["jobs"][0]["program"]["argv"][1] = 3; }),
       "jobs[0].program.argv[1]: must be a string"},
      {"program unknown placeholder",
       with(Program,
            [](json& d) { d["jobs"][0]["program"]["argv"][3] = "${HOST}"; }),
       "jobs[0].program.argv[3]: unknown placeholder ${HOST}"},
      {"program env not string",
       with(Program, [](json& d) { d["jobs"][0]["program"]["env"]["N"] = 1; }),
       "jobs[0].program.env.N: must be a string"},
      {"program env placeholder",
       with(Program,
            [](json& d) { d["jobs"][0]["program"]["env"]["N"] = "${X}"; }),
       "jobs[0].program.env.N: unknown placeholder ${X}"},
      {"program typo",
       with(Program, [](json& d) { d["jobs"][0]["program"]["args"] = 1; }),
       "jobs[0].program.args: unknown field"},
      {"expect on a chief that does not exist",
       with(Allreduce,
            [](json& d) {
              d["expect"] = {
                  {{"kind", "allreduce_straggler"}, {"pod", "bert-chief-0"}}};
            }),
       "expect[0].pod: no pod named \"bert-chief-0\""},
  };
  for (const BadCase& c : cases) {
    try {
      ParseScenario(c.doc());
      ADD_FAILURE() << c.what << ": accepted";
    } catch (const ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos)
          << c.what << ": got \"" << e.what() << "\"";
    }
  }
}

TEST(JobKindsTest, LayoutNamesChiefEvaluatorAndMasterAfterTheOthers) {
  Scenario t = ParseScenario(TfJob());
  Layout l = MakeLayout(t, "0123abcd");
  std::vector<std::string> names;
  for (const SimPod& p : l.pods) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "ctr-ps-0", "ctr-ps-1", "ctr-worker-0", "ctr-worker-1",
                       "ctr-chief-0", "ctr-evaluator-0"}));
  EXPECT_EQ(l.Find("ctr-chief-0")->resources.cpu_limit_cores, 0.25);

  json a = Allreduce();
  a["jobs"][0]["chief"] = 1;
  Scenario s = ParseScenario(a);
  Layout r = MakeLayout(s, "0123abcd");
  const SimPod* master = r.Find("bert-master-0");
  ASSERT_NE(master, nullptr);
  EXPECT_EQ(AllreduceRank(*master), 0);
  EXPECT_EQ(AllreduceRank(*r.Find("bert-worker-0")), 1);
  EXPECT_EQ(AllreduceRank(*r.Find("bert-worker-3")), 4);
  EXPECT_EQ(AllreduceWorldSize(s.jobs[0]), 5);
  std::vector<const SimPod*> order = RankOrder(r, s.jobs[0]);
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order[0], master);
  EXPECT_EQ(order[4]->name, "bert-worker-3");
}

std::map<std::string, std::string> EnvMap(const json& pod) {
  std::map<std::string, std::string> out;
  for (const json& e : pod["spec"]["containers"][0]["env"])
    out[e["name"]] = e["value"];
  return out;
}

TEST(JobKindsTest, PyTorchJobPodsAsTheOperatorMakesThem) {
  json a = Allreduce();
  a["jobs"][0]["chief"] = 1;
  Scenario s = ParseScenario(a);
  Layout l = MakeLayout(s, "0123abcd");
  const SimPod& master = *l.Find("bert-master-0");
  const SimPod& w2 = *l.Find("bert-worker-2");
  json pod = PodJson(l, w2, {}, "1", "2026-01-01T00:00:00Z");
  const json& labels = pod["metadata"]["labels"];
  EXPECT_EQ(labels["training.kubeflow.org/replica-type"], "worker");
  EXPECT_EQ(labels["training.kubeflow.org/replica-index"], "2");
  EXPECT_EQ(labels["training.kubeflow.org/operator-name"],
            "pytorchjob-controller");
  EXPECT_FALSE(labels.contains("training.kubeflow.org/job-role"));
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["kind"], "PyTorchJob");
  EXPECT_EQ(pod["spec"]["containers"][0]["name"], "pytorch");
  auto env = EnvMap(pod);
  EXPECT_EQ(env["MASTER_ADDR"], master.ip);
  EXPECT_EQ(env["MASTER_PORT"], "2222");
  EXPECT_EQ(env["RANK"], "3");
  EXPECT_EQ(env["WORLD_SIZE"], "5");
  EXPECT_FALSE(env.count("TF_CONFIG"));
  EXPECT_FALSE(env.count("TRAINSIM_STEPS_FILE"));  // built-in pod

  json mp = PodJson(l, master, {}, "1", "2026-01-01T00:00:00Z");
  EXPECT_EQ(mp["metadata"]["labels"]["training.kubeflow.org/replica-type"],
            "master");
  EXPECT_EQ(mp["metadata"]["labels"]["training.kubeflow.org/job-role"],
            "master");
  EXPECT_EQ(EnvMap(mp)["RANK"], "0");
}

TEST(JobKindsTest, TfConfigHasChiefAndLeavesEvaluatorOut) {
  Scenario s = ParseScenario(TfJob());
  Layout l = MakeLayout(s, "0123abcd");
  json tf = json::parse(TfConfig(l, *l.Find("ctr-evaluator-0")));
  EXPECT_EQ(tf["task"]["type"], "evaluator");
  EXPECT_EQ(tf["task"]["index"], 0);
  EXPECT_EQ(tf["cluster"]["chief"], json::array({"ctr-chief-0.ml.svc:2222"}));
  EXPECT_EQ(tf["cluster"]["ps"].size(), 2u);
  EXPECT_FALSE(tf["cluster"].contains("evaluator"));
  json chief = PodJson(l, *l.Find("ctr-chief-0"), {}, "1", "x");
  EXPECT_EQ(chief["metadata"]["labels"]["training.kubeflow.org/replica-type"],
            "chief");
  EXPECT_EQ(chief["metadata"]["ownerReferences"][0]["kind"], "TFJob");
}

TEST(JobKindsTest, ProgramPodsGetIpsStepsFileAndExpandedPlaceholders) {
  Scenario s = ParseScenario(Program());
  Layout l = MakeLayout(s, "0123abcd");
  const SimPod& w1 = *l.Find("ctr-worker-1");
  // No DNS in trainsim: a program's cluster spec names pods by IP.
  json tf = json::parse(TfConfig(l, w1));
  EXPECT_EQ(tf["cluster"]["ps"][0], l.Find("ctr-ps-0")->ip + ":2222");
  ProgramLaunch launch = MakeProgramLaunch(l, w1, "/src");
  EXPECT_EQ(launch.argv,
            (std::vector<std::string>{"/src/.venv-workloads/bin/python",
                                      "/src/bench/workloads/tf2_ps.py", "--x",
                                      "worker-1"}));
  auto has = [&](const std::string& kv) {
    return std::find(launch.env.begin(), launch.env.end(), kv) !=
           launch.env.end();
  };
  EXPECT_TRUE(
      has("TRAINSIM_STEPS_FILE=/run/trainsim/0123abcd/steps/ctr-worker-1"));
  EXPECT_TRUE(has("TASK=ctr-worker-1@" + w1.ip + ":2222"));
  EXPECT_TRUE(has("PLAIN=1"));
  EXPECT_TRUE(has("TF_CONFIG=" + TfConfig(l, w1)));
  // The pod spec shows the same operator environment.
  auto env = EnvMap(PodJson(l, w1, {}, "1", "x"));
  EXPECT_EQ(env["TRAINSIM_STEPS_FILE"],
            "/run/trainsim/0123abcd/steps/ctr-worker-1");

  EXPECT_EQ(ExpandPlaceholders("${PS_HOSTS}|${WORKER_HOSTS}", l, w1, ""),
            l.Find("ctr-ps-0")->ip + ":2222," + l.Find("ctr-ps-1")->ip +
                ":2222|" + l.Find("ctr-worker-0")->ip + ":2222," + w1.ip +
                ":2222");
  EXPECT_EQ(UnknownPlaceholders("a ${ROLE} ${NOPE} ${INDEX}"),
            std::vector<std::string>{"NOPE"});
}

TEST(JobKindsTest, SeedLabelsGiveNoTfConfig) {
  json d = Program();
  d["jobs"][0]["labels"] = "seed";
  Scenario s = ParseScenario(d);
  Layout l = MakeLayout(s, "0123abcd");
  auto env = EnvMap(PodJson(l, *l.Find("ctr-ps-1"), {}, "1", "x"));
  EXPECT_FALSE(env.count("TF_CONFIG"));
  EXPECT_TRUE(env.count("TRAINSIM_STEPS_FILE"));
}

}  // namespace
}  // namespace trainsim
