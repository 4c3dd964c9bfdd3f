// The timeline steps create_backup and restore_table: what they validate,
// and that a backup taken on a lagging cluster restores without the writes
// that cluster had not applied.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/loader.h"
#include "scenarios/runner.h"

namespace btsim::scenarios {
namespace {

using ::testing::HasSubstr;

// c1 (the writer's) and c3, whose link from c1 is cut from 2 s to 6 s.
constexpr char kBase[] = R"pb(
  duration { seconds: 10 }
  instance {
    clusters { id: "c1" zone: "us-east1-b" nodes: 1 }
    clusters { id: "c3" zone: "europe-west1-d" nodes: 1 }
    app_profiles {
      id: "pin"
      single_cluster { cluster_id: "c1" }
    }
  }
  tables {
    id: "t"
    families { name: "cf" }
  }
  clients {
    name: "app"
    zone: "us-east1-b"
    app_profile: "pin"
    workload {
      mix { write: 1 }
      keys { sequential {} entities: 100000 }
      ops_per_second: 50
    }
  }
  timeline {
    at { seconds: 2 }
    partition { a: "c1" b: "c3" one_way: true }
    for { seconds: 4 }
  }
)pb";

std::string Error(const std::string& steps) {
  auto loaded = ParseScenario(std::string(kBase) + steps, "s.textproto");
  return loaded.ok() ? std::string("ok") : loaded.status().message();
}

TEST(BackupStepsTest, ValidateTheirFields) {
  EXPECT_EQ(Error(R"pb(timeline {
                         at { seconds: 1 }
                         create_backup { cluster: "c1" table: "t" backup: "b" }
                       })pb"),
            "ok");
  EXPECT_THAT(Error(R"pb(timeline {
                           at { seconds: 1 }
                           create_backup { cluster: "c9" table: "t" backup: "b" }
                         })pb"),
              HasSubstr("timeline[1].create_backup.cluster"));
  EXPECT_THAT(Error(R"pb(timeline {
                           at { seconds: 1 }
                           create_backup { cluster: "c1" table: "x" backup: "b" }
                         })pb"),
              HasSubstr("timeline[1].create_backup.table"));
  EXPECT_THAT(Error(R"pb(timeline {
                           at { seconds: 1 }
                           create_backup { cluster: "c1" table: "t" backup: "-b" }
                         })pb"),
              HasSubstr("timeline[1].create_backup.backup"));
  EXPECT_THAT(Error(R"pb(timeline {
                           at { seconds: 1 }
                           create_backup {
                             cluster: "c1"
                             table: "t"
                             backup: "b"
                             expire_after { seconds: 3600 }
                           }
                         })pb"),
              HasSubstr("timeline[1].create_backup.expire_after"));
  EXPECT_THAT(Error(R"pb(timeline {
                           at { seconds: 1 }
                           restore_table { cluster: "c1" backup: "b" table: "t" }
                         })pb"),
              HasSubstr("timeline[1].restore_table.table: table 't' already"));
}

TEST(BackupStepsTest, ABackupOnALaggingClusterRestoresWithoutItsMissingWrites) {
  auto loaded = ParseScenario(std::string(kBase) + R"pb(
    timeline {
      at { seconds: 5 }
      create_backup { cluster: "c3" table: "t" backup: "lagging" }
    }
    timeline {
      at { seconds: 5 }
      create_backup { cluster: "c1" table: "t" backup: "current" }
    }
    timeline {
      at { seconds: 8 }
      restore_table { cluster: "c3" backup: "lagging" table: "from-c3" }
    }
    timeline {
      at { seconds: 8 }
      restore_table { cluster: "c1" backup: "current" table: "from-c1" }
    }
    timeline {
      at { seconds: 9 }
      restore_table { cluster: "c1" backup: "missing" table: "never" }
    }
  )pb",
                              "s.textproto");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  auto outcome = RunScenario(*loaded, RunOptions());
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  std::vector<std::string> labels;
  for (const Event& e : outcome->history.events) {
    if (e.kind == EventKind::kCreateBackup ||
        e.kind == EventKind::kRestoreTable) {
      EXPECT_EQ(e.refused, e.detail == "missing") << e.label;
      labels.push_back(e.label);
    }
  }
  ASSERT_EQ(labels.size(), 5u);
  // About 50 writes a second: c3 has the 2 s before the cut, c1 all 5 s.
  EXPECT_THAT(labels[0], HasSubstr("backup lagging of t on c3 (rows: c1 2"));
  EXPECT_THAT(labels[0], HasSubstr("c3 1"));
  EXPECT_THAT(labels[2], HasSubstr("restore from-c3 from backup lagging of "
                                   "c3 (1"));
  EXPECT_THAT(labels[3], HasSubstr("restore from-c1 from backup current of "
                                   "c1 (2"));
  EXPECT_THAT(labels[4], HasSubstr("refused"));
}

}  // namespace
}  // namespace btsim::scenarios
