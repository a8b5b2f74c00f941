package dev.mineclaw.linkcheck;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.FieldModel;
import java.lang.classfile.MethodModel;
import java.lang.classfile.constantpool.ClassEntry;
import java.lang.classfile.constantpool.FieldRefEntry;
import java.lang.classfile.constantpool.InvokeDynamicEntry;
import java.lang.classfile.constantpool.MemberRefEntry;
import java.lang.classfile.constantpool.MethodTypeEntry;
import java.lang.classfile.constantpool.NameAndTypeEntry;
import java.lang.classfile.constantpool.PoolEntry;
import java.lang.reflect.AccessFlag;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Checks that a plugin jar links against one server line's API: every class it names outside
 * itself and the JDK exists there, every field and method it uses exists with the exact
 * descriptor it was compiled with (so a changed return type, as Adventure 5 made of
 * {@code build()}, counts as missing), every lambda's interface still has that method, and no
 * API interface the jar implements has grown an abstract method the jar lacks.
 *
 * <p>The JDK is left to {@code --release}: its members are not checked, but API classes may
 * extend JDK ones, so those are read from the running JDK when a lookup walks into them.
 */
public final class JarLinkCheck {
    private static final Pattern CLASS_IN_DESCRIPTOR = Pattern.compile("L([^;]+);");
    private static final Set<String> JDK_PREFIXES = Set.of("java/", "javax/", "jdk/", "sun/");
    private static final String LAMBDA_FACTORY = "java/lang/invoke/LambdaMetafactory";

    private final Map<String, ClassModel> own;
    private final ApiClassPath api;
    private final Map<String, Optional<ClassModel>> jdk = new HashMap<>();
    private final Set<String> problems = new TreeSet<>();

    private JarLinkCheck(Map<String, ClassModel> own, ApiClassPath api) {
        this.own = own;
        this.api = api;
    }

    /** The problems found, one sentence each, sorted; empty when the jar links. */
    public static List<String> check(Path pluginJar, List<Path> apiJars) {
        try (ApiClassPath api = new ApiClassPath(apiJars)) {
            JarLinkCheck check = new JarLinkCheck(readJar(pluginJar), api);
            check.own.values().forEach(check::checkClass);
            return List.copyOf(check.problems);
        }
    }

    private static Map<String, ClassModel> readJar(Path jar) {
        Map<String, ClassModel> classes = new HashMap<>();
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            for (ZipEntry entry : zip.stream().toList()) {
                if (entry.getName().endsWith(".class") && !entry.getName().startsWith("META-INF/")) {
                    try (InputStream in = zip.getInputStream(entry)) {
                        ClassModel model = ClassFile.of().parse(in.readAllBytes());
                        classes.put(model.thisClass().asInternalName(), model);
                    }
                }
            }
        } catch (IOException exc) {
            throw new UncheckedIOException(exc);
        }
        return classes;
    }

    private void checkClass(ClassModel model) {
        String where = model.thisClass().asInternalName();
        for (PoolEntry entry : model.constantPool()) {
            switch (entry) {
                case ClassEntry type -> requireType(where, type.asInternalName());
                case MemberRefEntry member -> requireMember(where, member);
                case MethodTypeEntry type -> requireDescriptor(where, type.descriptor().stringValue());
                case NameAndTypeEntry nameAndType -> requireDescriptor(where, nameAndType.type().stringValue());
                case InvokeDynamicEntry indy -> requireLambdaTarget(where, indy);
                default -> {
                    // Strings, numbers and names carry no link of their own.
                }
            }
        }
        for (FieldModel field : model.fields()) {
            requireDescriptor(where, field.fieldType().stringValue());
        }
        for (MethodModel method : model.methods()) {
            requireDescriptor(where, method.methodType().stringValue());
        }
        if (!model.flags().has(AccessFlag.ABSTRACT) && !model.flags().has(AccessFlag.INTERFACE)) {
            requireImplemented(where, model);
        }
    }

    private void requireType(String where, String name) {
        String element = name.startsWith("[") ? elementOf(name) : name;
        if (element != null && external(element) && this.api.find(element).isEmpty()) {
            this.problems.add(where + ": class " + element + " is missing");
        }
    }

    private void requireDescriptor(String where, String descriptor) {
        Matcher matcher = CLASS_IN_DESCRIPTOR.matcher(descriptor);
        while (matcher.find()) {
            requireType(where, matcher.group(1));
        }
    }

    private void requireMember(String where, MemberRefEntry member) {
        String owner = member.owner().asInternalName();
        if (owner.startsWith("[") || !external(owner)) {
            return;
        }
        boolean field = member instanceof FieldRefEntry;
        String name = member.name().stringValue();
        String type = member.type().stringValue();
        if (this.api.find(owner).isPresent() && !declaredInHierarchy(where, owner, name, type, field)) {
            this.problems.add(where + ": " + (field ? "field " : "method ") + owner + "." + name + type + " is missing");
        }
    }

    /** A lambda or method reference to an API interface needs that interface's method as compiled. */
    private void requireLambdaTarget(String where, InvokeDynamicEntry indy) {
        var bootstrap = indy.bootstrap();
        if (!LAMBDA_FACTORY.equals(bootstrap.bootstrapMethod().reference().owner().asInternalName())
                || bootstrap.arguments().isEmpty()
                || !(bootstrap.arguments().getFirst() instanceof MethodTypeEntry samType)) {
            return;
        }
        String indyType = indy.type().stringValue();
        String returned = indyType.substring(indyType.indexOf(')') + 1);
        if (!returned.startsWith("L")) {
            return;
        }
        String target = returned.substring(1, returned.length() - 1);
        String name = indy.name().stringValue();
        String type = samType.descriptor().stringValue();
        if (external(target) && this.api.find(target).isPresent()
                && !declaredInHierarchy(where, target, name, type, false)) {
            this.problems.add(where + ": lambda target " + target + "." + name + type + " is missing");
        }
    }

    /** Every abstract method of every API interface the class implements has a body somewhere. */
    private void requireImplemented(String where, ClassModel model) {
        Map<String, String> abstractOnes = new HashMap<>();
        Set<String> bodies = new HashSet<>();
        for (ClassModel type : hierarchy(where, model.thisClass().asInternalName())) {
            boolean api = external(type.thisClass().asInternalName());
            for (MethodModel method : type.methods()) {
                String key = method.methodName().stringValue() + method.methodType().stringValue();
                if (method.flags().has(AccessFlag.STATIC)) {
                    continue;
                }
                if (method.flags().has(AccessFlag.ABSTRACT)) {
                    if (api && type.flags().has(AccessFlag.INTERFACE)) {
                        abstractOnes.putIfAbsent(key, type.thisClass().asInternalName());
                    }
                } else {
                    bodies.add(key);
                }
            }
        }
        abstractOnes.forEach((key, owner) -> {
            if (!bodies.contains(key)) {
                this.problems.add(where + ": does not implement " + owner + "." + key);
            }
        });
    }

    private boolean declaredInHierarchy(String where, String owner, String name, String type, boolean field) {
        for (ClassModel model : hierarchy(where, owner)) {
            if (field) {
                for (FieldModel candidate : model.fields()) {
                    if (candidate.fieldName().equalsString(name) && candidate.fieldType().equalsString(type)) {
                        return true;
                    }
                }
            } else {
                for (MethodModel candidate : model.methods()) {
                    if (candidate.methodName().equalsString(name) && candidate.methodType().equalsString(type)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** The class and all its supertypes that can be read; an unreadable API supertype is a problem. */
    private List<ClassModel> hierarchy(String where, String start) {
        List<ClassModel> found = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        Deque<String> queue = new ArrayDeque<>(List.of(start, "java/lang/Object"));
        while (!queue.isEmpty()) {
            String name = queue.removeFirst();
            if (!seen.add(name)) {
                continue;
            }
            Optional<ClassModel> model = lookup(name);
            if (model.isEmpty()) {
                if (external(name)) {
                    this.problems.add(where + ": class " + name + " is missing");
                }
                continue;
            }
            found.add(model.get());
            model.get().superclass().ifPresent(parent -> queue.addLast(parent.asInternalName()));
            model.get().interfaces().forEach(parent -> queue.addLast(parent.asInternalName()));
        }
        return found;
    }

    private Optional<ClassModel> lookup(String name) {
        ClassModel mine = this.own.get(name);
        if (mine != null) {
            return Optional.of(mine);
        }
        return external(name) ? this.api.find(name) : this.jdk.computeIfAbsent(name, JarLinkCheck::readJdk);
    }

    private static Optional<ClassModel> readJdk(String name) {
        try {
            Class<?> type = Class.forName(name.replace('/', '.'), false, null);
            try (InputStream in = type.getModule().getResourceAsStream(name + ".class")) {
                return in == null ? Optional.empty() : Optional.of(ClassFile.of().parse(in.readAllBytes()));
            }
        } catch (ClassNotFoundException exc) {
            return Optional.empty();
        } catch (IOException exc) {
            throw new UncheckedIOException(exc);
        }
    }

    private boolean external(String name) {
        return !this.own.containsKey(name) && JDK_PREFIXES.stream().noneMatch(name::startsWith);
    }

    private static String elementOf(String arrayDescriptor) {
        Matcher matcher = CLASS_IN_DESCRIPTOR.matcher(arrayDescriptor);
        return matcher.find() ? matcher.group(1) : null;
    }
}
