/*
 * Copyright 2026 The DJL Distributed Authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
 * in compliance with the License. You may obtain a copy of the License at
 *
 * http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under the License
 * is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express
 * or implied. See the License for the specific language governing permissions and limitations under
 * the License.
 */
package ai.djl.distributed.architecture;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;

/**
 * The layers of the whole project, checked on the main classes of every module (this module's test
 * classpath holds them all): each layer imports only the layers below it, and no package depends on
 * itself through others.
 *
 * <pre>
 * shared vocabulary (ai.djl.distributed: exceptions, Work, ReduceOp)
 *   &lt;- store &lt;- rendezvous &lt;- backend (cpu; nccl, a module of its own) &lt;- pg
 *   &lt;- parallel (the data-parallel core)
 *   &lt;- ddp, fsdp &lt;- examples
 *   the launcher on rendezvous and stores; the command line and benchmarks beside pg;
 *   the GPT model (transformer) on DJL and the staged form alone, used by examples
 *   the staged form of a model (staged) on DJL alone, used by the model, the core and the trainers
 *   host memory of arrays (memory) on DJL alone, used by the CPU backend and the core
 * </pre>
 */
class ArchitectureTest {

    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes =
                new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .withImportOption(ArchitectureTest::notATestJar)
                        .importPackages("ai.djl.distributed");
    }

    /** Test jars (the plugin's in-process harness) are not main code. */
    private static boolean notATestJar(Location location) {
        return !location.contains("-tests.jar") && !location.contains("/test-classes/");
    }

    @Test
    void everyLayerImportsOnlyTheLayersBelowIt() {
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                .layer("Vocabulary")
                .definedBy("ai.djl.distributed")
                .layer("Store")
                .definedBy("ai.djl.distributed.store..")
                .layer("Rendezvous")
                .definedBy("ai.djl.distributed.rendezvous..")
                .layer("Backend")
                .definedBy("ai.djl.distributed.backend..")
                .layer("ProcessGroup")
                .definedBy("ai.djl.distributed.pg..")
                .layer("Launcher")
                .definedBy("ai.djl.distributed.launch..")
                .layer("Tools")
                .definedBy("ai.djl.distributed.cli..", "ai.djl.distributed.bench..")
                .layer("DataParallelCore")
                .definedBy("ai.djl.distributed.parallel..")
                .layer("Parallel")
                .definedBy("ai.djl.distributed.ddp..", "ai.djl.distributed.fsdp..")
                .layer("Model")
                .definedBy("ai.djl.distributed.transformer..")
                .layer("Examples")
                .definedBy("ai.djl.distributed.examples..")
                .layer("Staging")
                .definedBy("ai.djl.distributed.staged..")
                .layer("Memory")
                .definedBy("ai.djl.distributed.memory..")
                .whereLayer("Examples")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("Memory")
                .mayOnlyBeAccessedByLayers("Backend", "DataParallelCore", "Parallel", "Examples")
                .whereLayer("Staging")
                .mayOnlyBeAccessedByLayers("Model", "DataParallelCore", "Parallel", "Examples")
                .whereLayer("Model")
                .mayOnlyBeAccessedByLayers("Examples")
                .whereLayer("Parallel")
                .mayOnlyBeAccessedByLayers("Examples")
                .whereLayer("DataParallelCore")
                .mayOnlyBeAccessedByLayers("Parallel", "Examples")
                .whereLayer("Tools")
                .mayOnlyBeAccessedByLayers("Tools", "Examples")
                .whereLayer("Launcher")
                .mayOnlyBeAccessedByLayers("Tools", "Examples")
                .whereLayer("ProcessGroup")
                .mayOnlyBeAccessedByLayers("DataParallelCore", "Parallel", "Tools", "Examples")
                .whereLayer("Backend")
                .mayOnlyBeAccessedByLayers("ProcessGroup", "Tools", "Examples")
                .whereLayer("Rendezvous")
                .mayOnlyBeAccessedByLayers(
                        "Backend",
                        "ProcessGroup",
                        "Launcher",
                        "Tools",
                        "DataParallelCore",
                        "Parallel",
                        "Examples")
                .whereLayer("Store")
                .mayOnlyBeAccessedByLayers(
                        "Rendezvous",
                        "Backend",
                        "ProcessGroup",
                        "Launcher",
                        "Tools",
                        "DataParallelCore",
                        "Parallel",
                        "Examples")
                .check(classes);
    }

    /** The rules above see every module: a module missing from the class path would pass them. */
    @Test
    void everyModulesMainClassesAreChecked() {
        for (String name :
                List.of(
                        "ai.djl.distributed.ReduceOp",
                        "ai.djl.distributed.pg.ProcessGroup",
                        "ai.djl.distributed.backend.nccl.NcclOps",
                        "ai.djl.distributed.parallel.FlatBuffer",
                        "ai.djl.distributed.ddp.DistributedDataParallel",
                        "ai.djl.distributed.fsdp.FullyShardedDataParallel",
                        "ai.djl.distributed.transformer.GptBlock",
                        "ai.djl.distributed.staged.Stage",
                        "ai.djl.distributed.examples.DdpBasics")) {
            assertTrue(classes.contain(name), name + " (expected: among the checked classes)");
        }
    }

    @Test
    void noPackageDependsOnItselfThroughOthers() {
        slices().matching("ai.djl.distributed.(**)").should().beFreeOfCycles().check(classes);
    }
}
